:- module(union,
          [ heads_union/6,          % +M, +Ss, +A, +KnownAt, +ValidAt, -Heads
            member_heads_union/7    % +M, +Ss, +A, +V, +KnownAt, +ValidAt, -Heads
          ]).
:- use_module(store, [store_now/2, many_attr/2, front/4, record/3, mem_policy/2,
                      ended_at/4, fact_at/6, member_claim/5]).
:- use_module(dominance, [slot_heads/4, heads_at/7, slot_heads_among/4, monotone_slot/4,
                          dominates/3]).
:- use_module(policies, [front_index/2, front_dominated/3]).
:- use_module(chains, [linked_monotone/4]).
:- use_module(library(lists), [member/2]).
:- use_module(library(apply), [exclude/3]).

/** <module> The heads of a scope's view: the union of its layers

A scope's view reads its own slot and the shared layer's as one slot: the policy
decides among all their facts as among one slot's (dominance:heads_at/6). Dominance
is a relation between two facts, so a head of the union is a head of its own layer
that no fact of another layer dominates. Under a monotone policy, when a fact of a
layer dominates it, a record of that layer's frontier does too
(policies:frontier/2). So each layer's heads are checked against the other layers'
frontiers (a chain with explicit links keeps one too: links never cross slots), or
against their live facts where a layer keeps none (confirmations, a policy that is
not monotone).

At the memory's clock (a view's current answer, its beliefs) the layers' kept heads
and frontiers serve, so a read after a write costs what the layers' heads and
frontiers cost; at another time, each layer's heads_at/7. Before, the union's facts
were compared pairwise: a view's read after each write over a shared history of
2,000 facts took 2.2 s. A set's members are decided over the union's claims, member by
member (dominance:slot_heads_among/4).
*/

:- det(heads_union/6).
:- det(member_heads_union/7).

%!  heads_union(+M, +Ss, +A, +KnownAt, +ValidAt, -Heads) is det.
%
%   dominance:heads_at/6 over the union of the slots Ss of attribute A (a scope's slot
%   and the shared layer's): among their facts known at KnownAt and begun by ValidAt,
%   those no other dominates, less those ended by then. Either time may be none.
heads_union(M, Ss, A, KnownAt, ValidAt, Heads) :-
    (   many_attr(M, A)
    ->  findall(Id, ( member(S, Ss), fact_at(M, S, A, KnownAt, ValidAt, Id) ), Ids),
        set_heads(M, A, KnownAt, ValidAt, Ids, Heads)
    ;   findall(S-Hs-D, ( member(S, Ss), layer(M, S, A, KnownAt, ValidAt, Hs, D) ), Layers),
        findall(H, ( member(S-Hs-_, Layers), member(H, Hs),
                     \+ ( member(S2-_-D2, Layers), S2 \== S, dominated_by(M, D2, H) ) ),
                Heads)
    ).

%!  member_heads_union(+M, +Ss, +A, +V, +KnownAt, +ValidAt, -Heads) is det.
%
%   heads_union/6 of a set, about its member V alone (claims about two members never
%   dominate one another: a set of 10,000 members is not read whole for one).
member_heads_union(M, Ss, A, V, KnownAt, ValidAt, Heads) :-
    findall(Id, ( member(S, Ss), member_claim(M, S, A, V, Id),
                  fact_at(M, S, A, KnownAt, ValidAt, Id) ), Ids),
    set_heads(M, A, KnownAt, ValidAt, Ids, Heads).

% set_heads(+M, +A, +KnownAt, +ValidAt, +Ids, -Heads): the heads among claims Ids, less
% those ended by ValidAt (as known at KnownAt)
set_heads(M, A, KnownAt, ValidAt, Ids, Heads) :-
    slot_heads_among(M, A, Ids, Heads0),
    exclude(ended_at(M, KnownAt, ValidAt), Heads0, Heads).

% layer(+M, +S, +A, +KnownAt, +ValidAt, -Heads, -Dominators): the slot's own heads, and
% what may dominate a fact of another layer: front(Records), the slot's frontier, or
% facts(S, A, KnownAt, ValidAt), its live facts known and begun then
layer(M, S, A, KnownAt, ValidAt, Heads, D) :-
    KnownAt == none,
    once(store_now(M, Now)),
    ValidAt == Now,
    !,                                            % at the clock: what the slot keeps
    slot_heads(M, S, A, Heads),
    (   ( monotone_slot(M, S, A, _) ; linked_monotone(M, S, A, _) ),
        front(M, S, A, F)
    ->  front_index(F, Index),
        D = front(Index)
    ;   D = facts(S, A, KnownAt, ValidAt)
    ).
layer(M, S, A, KnownAt, ValidAt, Heads, D) :-
    heads_at(M, S, A, KnownAt, ValidAt, Heads, Front),
    (   Front == none
    ->  D = facts(S, A, KnownAt, ValidAt)
    ;   front_index(Front, Index),
        D = front(Index)
    ).

% dominated_by(+M, +Dominators, +H): a record of the layer's front (indexed: a poll's
% front holds each of its claims, tied in time, and each head of the other layer was
% checked against all of them, n^2) or a live fact of it dominates H
dominated_by(M, front(Index), H) :-
    once(mem_policy(M, P)),
    once(record(M, H, RH)),
    front_dominated(P, Index, RH),
    !.
dominated_by(M, facts(S, A, KnownAt, ValidAt), H) :-
    fact_at(M, S, A, KnownAt, ValidAt, X),
    dominates(M, X, H),
    !.
