:- module(dominance,
          [ dominates/3,            % +M, +F, +G
            add_facts/2,            % +M, +Recs
            retract_fact/4,         % +M, +Id, +RA, +Reason
            undo_facts/2,           % +M, +Ids
            unretract/2,            % +M, +Id
            slot_heads/4,           % +M, +S, +A, -Heads
            heads_among/3,          % +M, +Ids, -Heads
            recompute_slot/3,       % +M, +S, +A
            resolution/4,           % +M, +Heads, -Status, -Groups
            dominators/3,           % +M, +Id, -Ids (live facts that dominate Id)
            dominated/3,            % +M, +Id, -Ids (live facts Id dominates)
            heads_at/6,             % +M, +S, +A, +KnownAt, +ValidAt, -Heads
            heads_union/6,          % +M, +Ss, +A, +KnownAt, +ValidAt, -Heads
            ended/3,                % +M, +Id, +Now
            heads_holds/4,          % +M, +A, +Heads, -Values
            dominance_pairs/3       % +M, +Ids, -Pairs
          ]).
:- use_module(store, [bind_source/4, key_layer/2, use_nonce/3, fact/10, payload/3,
                      fact_meta/3, sup/3, retracted/4, head/4,
                      front/4, linked/3, holds/4, conflict/3, tier_rank/3, mem_policy/2,
                      record/3, slot_live/4, timed/3, store_now/2, many_attr/2, touch/1,
                      fact_count/2]).
:- use_module(policies, [policy_dominates/3, monotone/1, frontier/2, newest_first/2,
                          insert_newest/3,
                          confirmation_source/1]).
:- use_module(library(lists), [member/2, append/3]).
:- use_module(library(assoc), [empty_assoc/1, put_assoc/4, get_assoc/3]).
:- use_module(library(yall)).
:- use_module(library(apply), [include/3, exclude/3, maplist/3, foldl/4]).
:- use_module(library(pairs), [pairs_values/2]).
:- use_module(library(error), [existence_error/2, permission_error/3, domain_error/2]).

/** <module> Dominance, chain heads, residual conflicts, and the writes that keep them

dominates(M, F, G): F makes G obsolete in memory M. An explicit link F
supersedes G decides it whatever the times; a link G supersedes F excludes
it; otherwise the memory's policy decides (policies:policy_dominates/3). A
chain head is a live fact that no live fact dominates. Heads, holds/4 and
conflict/3 are kept current on every write, never recomputed per query.

Writes raise ISO error terms (library(error)); the Python bridge maps them to
the truthkeeper error family in one table:

  - permission_error(add, fact_id, Id): the id is taken
  - permission_error(reuse, nonce, Nonce): a replayed signature
  - permission_error(bind, source_tier, Source-Tier): the source belongs to Tier
  - existence_error(fact, Id): supersedes or retract names no fact
  - permission_error(supersede, other_slot | higher_tier | cycle, F-G)
  - permission_error(retract, retracted_fact, Id)
*/

:- det(add_facts/2).
:- det(retract_fact/4).
:- det(undo_facts/2).
:- det(unretract/2).
:- det(slot_heads/4).
:- det(heads_among/3).
:- det(recompute_slot/3).
:- det(resolution/4).
:- det(dominators/3).
:- det(dominated/3).
:- det(heads_at/6).
:- det(heads_union/6).
:- det(dominance_pairs/3).

%!  dominates(+M, +F, +G) is semidet.
dominates(M, F, G) :-
    (   sup(M, F, G)
    ->  true
    ;   sup(M, G, F)
    ->  fail
    ;   mem_policy(M, P),
        record(M, F, RF),
        record(M, G, RG),
        policy_dominates(P, RF, RG)
    ).

%!  add_facts(+M, +Recs) is det.
%
%   Add a batch of f(Id, S, A, Key, VF, VT, RA, Tier, Src, Sup, Nonce, Json, Meta)
%   atomically (Sup and Nonce are @(none) when absent; Meta the Key-Value pairs the
%   policy reads) (a transaction): every fact, or none and an error.
add_facts(M, Recs) :-
    transaction(add_recs(M, Recs)).

add_recs(M, Recs) :-
    forall(member(R, Recs), assert_rec(M, R)),
    forall(member(R, Recs), check_rec_link(M, R)),
    no_cycle(M, Recs),
    findall(S-A-Id, member(f(Id, S, A, _, _, _, _, _, _, _, _, _, _), Recs), Keyed0),
    msort(Keyed0, Keyed),
    slot_groups(Keyed, Groups),
    forall(member(S-A-Ids, Groups), update_slot(M, S, A, Ids)),
    touch(M).

assert_rec(M, f(Id, S, A, K, VF, VT, RA, Tier, Src, Sup, Nonce, Json, Meta)) :-
    (   fact(M, Id, _, _, _, _, _, _, _, _)
    ->  permission_error(add, fact_id, Id)
    ;   true
    ),
    (   Nonce == @(none)
    ->  true
    ;   use_nonce(M, Nonce, Id)
    ),
    key_layer(S, Layer),
    bind_source(M, Layer-Src, Tier, Id),
    assertz(fact(M, Id, S, A, K, VF, VT, RA, Tier, Src)),
    mark_timed(M, S, A, VF, VT),
    assertz(payload(M, Id, Json)),
    ( Meta == [] -> true ; assertz(fact_meta(M, Id, Meta)) ),
    (   Sup == @(none), \+ confirmation_source(Src)
    ->  true
    ;   ( Sup == @(none) -> true ; assertz(sup(M, Id, Sup)) ),
        % explicit links and confirmations are decided fact by fact, not by the frontier
        ( linked(M, S, A) -> true ; assertz(linked(M, S, A)) )
    ).

check_rec_link(M, f(Id, _, _, _, _, _, _, _, _, Sup, _, _, _)) :-
    (   Sup == @(none)
    ->  true
    ;   check_link_ends(M, Id, Sup)
    ).

% no_cycle(+M, +Recs): the explicit links of a batch close no loop. A fact supersedes at
% most one fact and the stored links are acyclic, so a loop runs through new facts only:
% each new fact's links are walked once, across new facts (an old one ends the walk).
no_cycle(M, Recs) :-
    (   member(f(_, _, _, _, _, _, _, _, _, Sup, _, _, _), Recs), Sup \== @(none)
    ->  findall(Id-new, member(f(Id, _, _, _, _, _, _, _, _, _, _, _, _), Recs), Pairs),
        list_to_assoc_last(Pairs, A0),
        foldl(walk_links(M), Pairs, A0, _)
    ;   true                            % no links in the batch: no loop
    ).

list_to_assoc_last(Pairs, A) :-
    empty_assoc(E),
    foldl([K-V, A1, A2]>>put_assoc(K, A1, V, A2), Pairs, E, A).

walk_links(M, X-_, A0, A) :-
    (   get_assoc(X, A0, State)
    ->  (   State == done
        ->  A = A0
        ;   State == path
        ->  once(sup(M, X, Z)),
            permission_error(supersede, cycle, X-Z)
        ;   sup(M, X, Z)
        ->  put_assoc(X, A0, path, A1),
            walk_links(M, Z-x, A1, A2),
            put_assoc(X, A2, done, A)
        ;   put_assoc(X, A0, done, A)
        )
    ;   A = A0                          % an old fact: its links never reach a new one
    ).

% slot_groups(+SortedSlotIdTriples, -Groups): S-A-[Id...] per slot
slot_groups([], []).
slot_groups([S-A-Id|T], [S-A-[Id|Ids]|Gs]) :-
    same_slot(T, S, A, Ids, Rest),
    slot_groups(Rest, Gs).

same_slot([S0-A0-Id|T], S, A, [Id|Ids], Rest) :-
    S0 == S, A0 == A, !,
    same_slot(T, S, A, Ids, Rest).
same_slot(Rest, _, _, [], Rest).

% A slot whose facts end or begin later: its heads at the memory's clock.
update_slot(M, S, A, _) :-
    timed(M, S, A),
    !,
    recompute_slot(M, S, A).
% A fact alone in a slot that had nothing is its head and its value holds: the common case
% of a bulk load, done without the general pass.
update_slot(M, S, A, [Id]) :-
    \+ many_attr(M, A),
    \+ sup(M, Id, _),
    \+ ( fact(M, G, S, A, _, _, _, _, _, _), G \== Id ),
    !,
    fact(M, Id, _, _, K, _, _, _, _, _),
    record(M, Id, R),
    assertz(head(M, S, A, Id)),
    assertz(front(M, S, A, [R])),
    assertz(holds(M, S, A, K)).
% A monotone policy on a slot without explicit links: each new fact is checked against
% the slot's frontier and its heads only, whatever the slot's size.
update_slot(M, S, A, Ids) :-
    frontier_slot(M, S, A, P),
    !,
    (   Ids = [Id]
    ->  insert_front(M, P, S, A, Id)
    ;   insert_batch(M, P, S, A, Ids)
    ),
    refresh_holds(M, S, A).
% A batch (a replay) into a slot with explicit links under a monotone policy: at once.
update_slot(M, S, A, [_, _|_]) :-
    linked_monotone(M, S, A, _),
    !,
    recompute_slot(M, S, A).
% Otherwise (explicit links, a policy that is not monotone): fact by fact, linear.
update_slot(M, S, A, Ids) :-
    forall(member(Id, Ids), insert_update(M, Id)),
    refresh_holds(M, S, A).

% linked_monotone(+M, +S, +A, -Policy): a slot with explicit links (no confirmation, not
% a set) under a monotone policy: its heads follow from the links and the frontier.
linked_monotone(M, S, A, P) :-
    linked(M, S, A),
    once(mem_policy(M, P)),
    monotone(P),
    \+ many_attr(M, A),
    \+ ( fact(M, _, S, A, _, _, _, _, _, Src), confirmation_source(Src) ).

% linked_heads(+M, +P, +Live, -Heads): heads_among/3 of such a slot's live facts in
% n log n rather than n^2: a fact is dominated when a live fact links to it, or when a
% record of the frontier dominates it by policy and it does not link to that record (the
% frontier holds a policy dominator of every fact that has one); a fact whose every
% frontier dominator is one it links to is decided by a scan of the slot (rare).
linked_heads(M, P, Live, Heads) :-
    findall(R, ( member(Id, Live), once(record(M, Id, R)) ), Recs),
    newest_first(Recs, Sorted),
    frontier(Sorted, Front),
    findall(X, ( member(R, Recs), arg(1, R, X), linked_head(M, P, Live, Front, R) ), Heads).

linked_head(M, P, Live, Front, R) :-
    arg(1, R, X),
    \+ ( sup(M, Y, X), \+ retracted(M, Y, _, _) ),
    (   \+ ( member(Fr, Front), arg(1, Fr, Y), Y \== X, policy_dominates(P, Fr, R) )
    ->  true
    ;   member(Fr, Front), arg(1, Fr, Y), Y \== X, \+ sup(M, X, Y), policy_dominates(P, Fr, R)
    ->  fail
    ;   undominated_in(M, Live, X)
    ).

% frontier_slot(+M, +S, +A, -Policy): the slot's heads follow from its frontier.
frontier_slot(M, S, A, P) :-
    monotone_slot(M, S, A, P),
    \+ timed(M, S, A).

% mark_timed(+M, +S, +A, +VF, +VT): the slot is timed when the fact ends, or begins
% after the memory's clock.
mark_timed(M, S, A, VF, VT) :-
    (   timed(M, S, A)
    ->  true
    ;   VT \== none
    ->  assertz(timed(M, S, A))
    ;   store_now(M, Now), Now \== none, VF > Now
    ->  assertz(timed(M, S, A))
    ;   true
    ).

% insert_front(+M, +P, +S, +A, +Id): Id was just asserted into a frontier slot.
insert_front(M, P, S, A, Id) :-
    once(record(M, Id, R)),
    ( front(M, S, A, F0) -> true ; F0 = [] ),
    forall(( head(M, S, A, H), once(record(M, H, RH)), policy_dominates(P, R, RH) ),
           retract(head(M, S, A, H))),
    (   member(Fr, F0), policy_dominates(P, Fr, R)
    ->  true
    ;   assertz(head(M, S, A, Id))
    ),
    insert_newest(R, F0, Sorted),                 % F0 is newest first already
    frontier(Sorted, F1),
    retractall(front(M, S, A, _)),
    assertz(front(M, S, A, F1)).

% insert_batch(+M, +P, +S, +A, +Ids): several facts of one slot at once. The old heads
% that a new fact dominates go; a new fact is a head when no record of the frontier of
% (old frontier + new facts) dominates it; that frontier is the slot's new one.
insert_batch(M, P, S, A, Ids) :-
    findall(R, ( member(Id, Ids), once(record(M, Id, R)) ), New),
    ( front(M, S, A, F0) -> true ; F0 = [] ),
    forall(( head(M, S, A, H), once(record(M, H, RH)),
             member(R, New), policy_dominates(P, R, RH) ),
           retractall(head(M, S, A, H))),
    append(New, F0, All),
    newest_first(All, Sorted),
    frontier(Sorted, F1),
    forall(( member(R, New), \+ ( member(Fr, F1), policy_dominates(P, Fr, R) ),
             arg(1, R, Id) ),
           assertz(head(M, S, A, Id))),
    retractall(front(M, S, A, _)),
    assertz(front(M, S, A, F1)).

% heads_by_frontier(+P, +Records, -HeadIds, -Front): the records no frontier record
% dominates.
heads_by_frontier(P, Recs, Heads, Front) :-
    newest_first(Recs, Sorted),
    frontier(Sorted, Front),
    findall(Id, ( member(R, Recs), arg(1, R, Id),
                  \+ ( member(Fr, Front), policy_dominates(P, Fr, R) ) ), Heads).

% insert_update(+M, +Id): Id has just been asserted: drop the heads it dominates and
% make it a head when no live fact of its slot dominates it.
insert_update(M, Id) :-
    fact(M, Id, S, A, _, _, _, _, _, _),
    forall(( head(M, S, A, H), dominates(M, Id, H) ),
           retract(head(M, S, A, H))),
    (   fact(M, G, S, A, _, _, _, _, _, _),
        G \== Id,
        \+ retracted(M, G, _, _),
        dominates(M, G, Id)
    ->  true
    ;   assertz(head(M, S, A, Id))
    ).

% check_link_ends(+M, +F, +G): the link's two facts exist, share a slot, and F's tier is
% not below G's (a link one of whose ends was erased was checked when it was made).
check_link_ends(M, F, G) :-
    (   \+ fact(M, G, _, _, _, _, _, _, _, _)
    ->  existence_error(fact, G)
    ;   true
    ),
    fact(M, F, S, A, _, _, _, _, TF, _),
    fact(M, G, S2, A2, _, _, _, _, TG, _),
    (   ( A == '$erased' ; A2 == '$erased' )
    ->  true                % an end was erased (it moved to its placeholder's slot)
    ;   S-A \== S2-A2
    ->  permission_error(supersede, other_slot, F-G)
    ;   tier_rank(M, TF, RF), tier_rank(M, TG, RG), RF < RG
    ->  permission_error(supersede, higher_tier, F-G)
    ;   true
    ).

%!  retract_fact(+M, +Id, +RA, +Reason) is det.
retract_fact(M, Id, RA, Reason) :-
    (   \+ fact(M, Id, _, _, _, _, _, _, _, _)
    ->  existence_error(fact, Id)
    ;   retracted(M, Id, _, _)
    ->  permission_error(retract, retracted_fact, Id)
    ;   assertz(retracted(M, Id, RA, Reason)),
        once(fact(M, Id, S, A, _, _, _, _, _, _)),
        (   frontier_slot(M, S, A, _),
            \+ head(M, S, A, Id),
            \+ ( front(M, S, A, F), member(R, F), arg(1, R, Id) )
        ->  true    % neither a head nor in the frontier: no head changes
        ;   recompute_slot(M, S, A)
        )
    ).

%!  undo_facts(+M, +Ids) is det.
%
%   Remove facts whose journal commit failed (they were never acknowledged)
%   and recompute the heads of their slots.
undo_facts(M, Ids) :-
    findall(S-A, ( member(Id, Ids), fact(M, Id, S, A, _, _, _, _, _, _) ), Slots0),
    sort(Slots0, Slots),
    forall(member(Id, Ids),
           ( retractall(fact(M, Id, _, _, _, _, _, _, _, _)),
             retractall(payload(M, Id, _)),
             retractall(fact_meta(M, Id, _)),
             retractall(nonce(M, _, Id)),
             retractall(source_tier(M, _, _, _, Id)),
             retractall(sup(M, Id, _)),
             retractall(head(M, _, _, Id)) )),
    forall(member(S-A, Slots),
           ( \+ ( fact(M, F, S, A, _, _, _, _, _, Src),
                  ( sup(M, F, _) ; confirmation_source(Src) ) )
           -> retractall(linked(M, S, A)) ; true )),
    forall(member(S-A, Slots), recompute_slot(M, S, A)).

%!  unretract(+M, +Id) is det.
%
%   Undo a retraction whose journal commit failed.
unretract(M, Id) :-
    retractall(retracted(M, Id, _, _)),
    (   once(fact(M, Id, S, A, _, _, _, _, _, _))
    ->  recompute_slot(M, S, A)
    ;   true
    ).

%!  heads_among(+M, +Ids, -Heads) is det.
%
%   The members of Ids that no member of Ids dominates.
heads_among(M, Ids, Heads) :-
    include(undominated_in(M, Ids), Ids, Heads).

undominated_in(M, Ids, G) :-
    \+ ( member(F, Ids), F \== G, dominates(M, F, G) ).

%!  slot_heads(+M, +S, +A, -Heads) is det.
slot_heads(M, S, A, Heads) :-
    findall(H, head(M, S, A, H), Heads).

%!  recompute_slot(+M, +S, +A) is det.
%
%   Recompute the heads of one slot from its live facts (at the memory's clock for
%   a timed slot).
recompute_slot(M, S, A) :-
    timed(M, S, A),
    !,
    retractall(front(M, S, A, _)),
    once(store_now(M, Now)),
    heads_at(M, S, A, none, Now, Heads),
    set_heads(M, S, A, Heads).
recompute_slot(M, S, A) :-
    slot_live(M, S, A, Live),
    retractall(front(M, S, A, _)),
    (   frontier_slot(M, S, A, P)
    ->  findall(R, ( member(Id, Live), once(record(M, Id, R)) ), Recs),
        heads_by_frontier(P, Recs, Heads, Front),
        assertz(front(M, S, A, Front))
    ;   linked_monotone(M, S, A, P)
    ->  linked_heads(M, P, Live, Heads)
    ;   heads_among(M, Live, Heads)
    ),
    set_heads(M, S, A, Heads).

set_heads(M, S, A, Heads) :-
    touch(M),
    retractall(head(M, S, A, _)),
    forall(member(H, Heads), assertz(head(M, S, A, H))),
    refresh_holds(M, S, A).

%!  heads_holds(+M, +A, +Heads, -Values) is det.
%
%   The values holds/3 yields for a slot of attribute A with these heads: its
%   value when they agree on one, none when they disagree or there are none; of
%   a set, each member whose chain is not contested.
heads_holds(M, A, Heads, Values) :-
    findall(K, ( member(H, Heads), fact(M, H, _, _, K, _, _, _, _, _) ), Ks),
    keys_holds(M, A, Ks, Values, _).

% keys_holds(+M, +A, +HeadKeys, -Values, -Contested): heads_holds/4 from the heads' value
% keys; Contested is true when they disagree (of a set: on a member's presence).
keys_holds(M, A, Ks0, Values, Contested) :-
    (   many_attr(M, A)
    ->  sort(Ks0, Ks),
        findall(V, ( member(m(V, 1), Ks), \+ memberchk(m(V, 0), Ks) ), Values),
        ( member(m(C, 1), Ks), memberchk(m(C, 0), Ks) -> Contested = true ; Contested = false )
    ;   sort(Ks0, Ks),
        (   Ks = [K] -> Values = [K], Contested = false
        ;   Ks == [] -> Values = [], Contested = false
        ;   Values = [], Contested = true
        )
    ).

% refresh_holds(+M, +S, +A): bring holds/4 and conflict/3 of a slot in line with its
% heads (keys_holds/5). holds/4 is touched only when the resolved value changes, so
% tabled beliefs are not invalidated needlessly.
refresh_holds(M, S, A) :-
    findall(K, ( head(M, S, A, H), fact(M, H, _, _, K, _, _, _, _, _) ), Ks),
    keys_holds(M, A, Ks, In, Contested),
    (   Contested == true
    ->  ( conflict(M, S, A) -> true ; assertz(conflict(M, S, A)) )
    ;   retractall(conflict(M, S, A))
    ),
    (   many_attr(M, A)
    ->  findall(O, holds(M, S, A, O), Old0),
        sort(Old0, Old),
        (   Old == In
        ->  true
        ;   forall(( member(X, Old), \+ memberchk(X, In) ), retract(holds(M, S, A, X))),
            forall(( member(Y, In), \+ memberchk(Y, Old) ), assertz(holds(M, S, A, Y)))
        )
    ;   holds(M, S, A, Old)
    ->  (   In == [Old]
        ->  true
        ;   retractall(holds(M, S, A, _)),
            forall(member(Y, In), assertz(holds(M, S, A, Y)))
        )
    ;   forall(member(Y, In), assertz(holds(M, S, A, Y)))
    ).

%!  resolution(+M, +Heads, -Status, -Groups) is det.
%
%   Status is unknown (no heads), resolved (one value) or conflict; Groups are
%   the heads grouped by value key, newest first (valid time, then recording),
%   each group a list of ids, the group of the newest head first. Heads of a set
%   (keys m(Member, Presence)) are grouped by key in the standard order of keys;
%   the set is in conflict when a member's chain has heads of both presences.
resolution(M, Heads, Status, Groups) :-
    member(H0, Heads), fact(M, H0, _, _, m(_, _), _, _, _, _, _),
    !,
    findall(K-(NVF-NRA-H), ( member(H, Heads), fact(M, H, _, _, K, VF, _, RA, _, _),
                             NVF is -VF, NRA is -RA ), Keyed),
    msort(Keyed, Sorted0),                      % by key, then newest first within a key
    findall(K-H, member(K-(_-_-H), Sorted0), Sorted),
    group_keys(Sorted, Groups),
    (   member(m(V, 1)-_, Keyed), memberchk(m(V, 0)-_, Keyed)
    ->  Status = conflict
    ;   Status = resolved
    ).
resolution(M, Heads, Status, Groups) :-
    findall(NK-(K-H), ( member(H, Heads),
                        fact(M, H, _, _, K, VF, _, RA, _, _),
                        NVF is -VF, NRA is -RA, NK = NVF-NRA ), Keyed),
    keysort(Keyed, Sorted),
    pairs_values(Sorted, KHs),
    group_keys(KHs, Groups),
    length(Groups, N),
    (   N =:= 0 -> Status = unknown
    ;   N =:= 1 -> Status = resolved
    ;   Status = conflict
    ).

group_keys([], []).
group_keys([K-H|T], [[H|Hs]|Gs]) :-
    take_key(T, K, Hs, Rest),
    group_keys(Rest, Gs).

take_key([], _, [], []).
take_key([K2-H|T], K, Hs, Rest) :-
    (   K2 == K
    ->  Hs = [H|Hs1], Rest = Rest1
    ;   Hs = Hs1, Rest = [K2-H|Rest1]
    ),
    take_key(T, K, Hs1, Rest1).

%!  dominators(+M, +Id, -Ids) is det.
%
%   The live facts of Id's slot that dominate Id.
dominators(M, Id, Ids) :-
    (   fact(M, Id, S, A, _, _, _, _, _, _)
    ->  findall(F, ( fact(M, F, S, A, _, _, _, _, _, _), F \== Id,
                     \+ retracted(M, F, _, _), dominates(M, F, Id) ), Ids)
    ;   existence_error(fact, Id)
    ).

%!  dominated(+M, +Id, -Ids) is det.
%
%   The live facts of Id's slot that Id dominates.
dominated(M, Id, Ids) :-
    (   fact(M, Id, S, A, _, _, _, _, _, _)
    ->  findall(G, ( fact(M, G, S, A, _, _, _, _, _, _), G \== Id,
                     \+ retracted(M, G, _, _), dominates(M, Id, G) ), Ids)
    ;   existence_error(fact, Id)
    ).

%!  heads_at(+M, +S, +A, +KnownAt, +ValidAt, -Heads) is det.
%
%   The heads of a slot as the store knew it at transaction time KnownAt, at
%   valid time ValidAt: among the facts that had begun by ValidAt, those no
%   other dominates, less those that had ended by then. A fact that a newer one
%   dominates ends where the newer one begins; once that one ends, the slot has
%   no head (the older fact does not come back). Either time may be none.
heads_at(M, S, A, KnownAt, ValidAt, Heads) :-
    findall(Id, ( fact(M, Id, S, A, _, VF, _, RA, _, _),
                  known(KnownAt, RA),
                  \+ ( retracted(M, Id, RRA, _), known(KnownAt, RRA) ),
                  begun(ValidAt, VF) ), Ids),
    (   monotone_slot(M, S, A, P)
    ->  findall(R, ( member(Id, Ids), once(record(M, Id, R)) ), Recs),
        heads_by_frontier(P, Recs, Heads0, _)
    ;   heads_among(M, Ids, Heads0)
    ),
    exclude(ended_at(M, ValidAt), Heads0, Heads).

%!  heads_union(+M, +Ss, +A, +KnownAt, +ValidAt, -Heads) is det.
%
%   heads_at/6 over the union of several slots of one attribute (a scope's slot
%   and the shared layer's): the policy decides among all their facts, as among
%   the facts of one slot. Pairwise (layers are small next to a whole slot).
heads_union(M, Ss, A, KnownAt, ValidAt, Heads) :-
    findall(Id, ( member(S, Ss), fact(M, Id, S, A, _, VF, _, RA, _, _),
                  known(KnownAt, RA),
                  \+ ( retracted(M, Id, RRA, _), known(KnownAt, RRA) ),
                  begun(ValidAt, VF) ), Ids),
    heads_among(M, Ids, Heads0),
    exclude(ended_at(M, ValidAt), Heads0, Heads).

% monotone_slot(+M, +S, +A, -Policy): heads follow from the slot's frontier (a monotone
% policy, no explicit links, not a set: a set's members are decided pairwise).
monotone_slot(M, S, A, P) :-
    once(mem_policy(M, P)),
    monotone(P),
    \+ linked(M, S, A),
    \+ many_attr(M, A).

known(none, _) :- !.
known(T, RA) :- RA =< T.

begun(none, _) :- !.
begun(T, VF) :- VF =< T.

ended_at(_, none, _) :- !, fail.
ended_at(M, T, Id) :-
    fact(M, Id, _, _, _, _, VT, _, _, _),
    VT \== none,
    VT =< T.

%!  ended(+M, +Id, +Now) is semidet.
%
%   The fact's valid_to is at or before Now.
ended(M, Id, Now) :-
    ended_at(M, Now, Id).

%!  dominance_pairs(+M, +Ids, -Pairs) is det.
%
%   The F-G pairs among the live facts Ids where F dominates G (a scope's view
%   draws the supersessions across its two layers).
dominance_pairs(M, Ids, Pairs) :-
    findall(F-G, ( member(F, Ids), member(G, Ids), F \== G,
                   \+ retracted(M, F, _, _), \+ retracted(M, G, _, _),
                   dominates(M, F, G) ), Pairs).
