:- module(claims,
          [ claims/3,             % +M, +GoldIds, -Items
            match_heads/6,        % +M, +Ss, +A, +Key, -Right, -Wrong
            view_heads/5          % +M, +Ss, +A, +Key, -Heads
          ]).
:- use_module(store, [fact/10, retracted/4, many_attr/2, store_now/2]).
:- use_module(dominance, [slot_heads/4]).
:- use_module(union, [heads_union/6, member_heads_union/7]).
:- use_module(policies, [confirmation_source/1]).
:- use_module(library(lists), [member/2, nth0/3, reverse/2]).
:- use_module(library(apply), [maplist/3, partition/4]).
:- use_module(library(rbtrees), [rb_new/1, rb_lookup/3, rb_insert_new/4]).
:- use_module(library(pairs), [pairs_keys_values/3]).

/** <module> The claims that learning from agreement reads

One item per slot with live facts (per member, in a set): each source's latest
live claim (valid time, then recording). A set's members are items of their
own, so two members are never read as a disagreement; a confirmation's fact is
the label, not a witness, so it is no claim (its slot's gold index says it).
*/

:- det(claims/3).
:- det(match_heads/6).
:- det(view_heads/5).

%!  claims(+M, +GoldIds, -Items) is det.
%
%   Items are -(Sources, ValueIndexes, NValues, GoldIndex, Values, Attribute);
%   GoldIndex is the index of the value of a confirmed fact (GoldIds) of the
%   item, or -1.
claims(M, Gold, Items) :-
    findall(S-A, ( fact(M, _, S, A, _, _, _, _, _, _) ), Slots0),
    sort(Slots0, Slots),
    findall(Item, ( member(S-A, Slots), slot_member(M, S, A, Member),
                    slot_claims(M, S, A, Member, Gold, Item) ), Items).

% slot_member(+M, +S, +A, -Member): a slot is one item (Member = any); a set is one item
% per member: its claims are presence claims about that member, never a disagreement
% between members.
slot_member(M, S, A, Member) :-
    (   many_attr(M, A)
    ->  findall(V, fact(M, _, S, A, m(V, _), _, _, _, _, _), Vs0),
        sort(Vs0, Vs),
        member(Member, Vs)
    ;   Member = any
    ).

of_member(any, _) :- !.
of_member(V, m(V1, _)) :- V1 == V.

slot_claims(M, S, A, Member, Gold, -(Srcs, Idx, N, G, Values, A)) :-
    findall(Src-(NVF-NRA-K), ( fact(M, Id, S, A, K, VF, _, RA, _, Src),
                               of_member(Member, K), \+ confirmation_source(Src),
                               \+ retracted(M, Id, _, _),
                               NVF is -VF, NRA is -RA ), Claims0),
    Claims0 \== [],
    msort(Claims0, Claims),
    latest_per_source(Claims, Latest),
    pairs_keys_values(Latest, Srcs, Ks),
    rb_new(T0),
    index_keys(Ks, T0, 0, N, [], Seen, Idx),
    reverse(Seen, Order),
    (   member(GId, Gold), fact(M, GId, S, A, GK, _, _, _, _, _), of_member(Member, GK),
        nth0(G0, Order, K1), K1 == GK
    ->  G = G0
    ;   G = -1
    ),
    maplist(key_value_out, Order, Values).

% key_value_out(+Key, -Out): a value key for a similarity: atoms and numbers as they are,
% anything else as its text.
key_value_out(K, K) :- ( atom(K) ; number(K) ), !.
key_value_out(K, T) :- format(string(T), "~w", [K]).

latest_per_source([], []).
latest_per_source([Src-(_-_-K)|T], [Src-K|R]) :-
    drop_source(T, Src, T1),
    latest_per_source(T1, R).

drop_source([S-_|T], Src, R) :- S == Src, !, drop_source(T, Src, R).
drop_source(R, _, R).

% index_keys(+Keys, +Tree, +N0, -N, +Seen0, -Seen, -Idx): each key's index among the
% distinct keys in order of first appearance (Tree: key -> index; a list searched for each
% key was quadratic: a poll of 6,000 values, 4 s), N of them, Seen newest first.
index_keys([], _, N, N, Seen, Seen, []).
index_keys([K|Ks], T0, N0, N, Seen0, Seen, [I|Is]) :-
    (   rb_lookup(K, I0, T0)
    ->  I = I0, T1 = T0, N1 = N0, Seen1 = Seen0
    ;   I = N0, rb_insert_new(T0, K, N0, T1), N1 is N0 + 1, Seen1 = [K|Seen0]
    ),
    index_keys(Ks, T1, N1, N, Seen1, Seen, Is).

%!  match_heads(+M, +Ss, +A, +Key, -Right, -Wrong) is det.
%
%   The heads of a slot whose value is (Right) or is not (Wrong) Key: what a
%   confirmation of Key teaches about their sources. In a set, only the heads
%   about Key's member. Ss is the slot's subject key, or a scope's view's two
%   (its own and the shared layer's): the heads of their union, as the view
%   shows them.
match_heads(M, Ss, A, K, Right, Wrong) :-
    view_heads(M, Ss, A, K, Heads),
    partition(holds_key(M, K), Heads, Right, Wrong).  % (subtract/3 was heads x right)

holds_key(M, K, H) :- fact(M, H, _, _, K1, _, _, _, _, _), K1 == K, !.

%!  view_heads(+M, +Ss, +A, +Key, -Heads) is det.
%
%   The heads of a slot (Ss: its subject key, or a view's two layers: their union at
%   the clock, as the view's current shows them); of a set, those about Key's member.
view_heads(M, [S], A, K, Heads) :-
    !,
    slot_heads(M, S, A, Heads0),
    (   K = m(V, _)          % a set: the heads about this member only
    ->  findall(H, ( member(H, Heads0), fact(M, H, _, _, m(V1, _), _, _, _, _, _), V1 == V ),
                Heads)
    ;   Heads = Heads0
    ).
view_heads(M, Ss, A, K, Heads) :-               % at the clock, as the view's current
    once(store_now(M, Now)),
    (   K = m(V, _)
    ->  member_heads_union(M, Ss, A, V, none, Now, Heads)
    ;   heads_union(M, Ss, A, none, Now, Heads)
    ).
