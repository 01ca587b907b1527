:- module(tk_dominance,
          [ dominates/3,            % +M, +F, +G
            policy_dominates/3,     % +Policy, +RecordF, +RecordG
            slot_heads/4,           % +M, +S, +A, -Heads
            heads_among/3,          % +M, +Ids, -Heads
            insert_update/2,        % +M, +Id
            recompute_slot/3,       % +M, +S, +A
            refresh_holds/3,        % +M, +S, +A
            check_link/4,           % +M, +F, +G, -Problem
            dominators/3,           % +M, +Id, -Ids (live facts that dominate Id)
            dominated/3,            % +M, +Id, -Ids (live facts Id dominates)
            heads_at/6              % +M, +S, +A, +KnownAt, +ValidAt, -Heads
          ]).
:- use_module(store).
:- use_module(policy_temporal, []).
:- use_module(policy_authority_first, []).
:- use_module(policy_temporal_within_authority, []).
:- use_module(library(lists), [member/2, list_to_set/2]).
:- use_module(library(apply), [include/3, exclude/3]).

/** <module> Dominance, chain heads, residual conflicts

dominates(M, F, G): F makes G obsolete in memory M. An explicit link F
supersedes G decides it whatever the times; a link G supersedes F excludes
it; otherwise the memory's policy decides. A chain head is a live fact that
no live fact dominates. Heads, holds/4 and conflict/3 are kept current on
every write (insert_update/2, recompute_slot/3), never recomputed per query.
*/

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

%!  policy_dominates(+Policy, +F, +G) is semidet.
%
%   Dispatch to the policy module over two records.
policy_dominates(temporal, F, G) :-
    policy_temporal:dominates(F, G).
policy_dominates(authority_first, F, G) :-
    policy_authority_first:dominates(F, G).
policy_dominates(temporal_within_authority, F, G) :-
    policy_temporal_within_authority:dominates(F, G).

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

%!  insert_update(+M, +Id) is det.
%
%   Id has just been asserted: drop the heads it dominates and make it a head
%   when no live fact of its slot dominates it.  Linear in the slot's size.
insert_update(M, Id) :-
    fact(M, Id, S, A, _, _, _, _, _, _),
    forall(( head(M, S, A, H), dominates(M, Id, H) ),
           retract(head(M, S, A, H))),
    (   fact(M, G, S, A, _, _, _, _, _, _),
        G \== Id,
        \+ retracted(M, G, _),
        dominates(M, G, Id)
    ->  true
    ;   assertz(head(M, S, A, Id))
    ).

%!  recompute_slot(+M, +S, +A) is det.
%
%   Recompute the heads of one slot from its live facts (after a retraction).
recompute_slot(M, S, A) :-
    slot_live(M, S, A, Live),
    heads_among(M, Live, Heads),
    retractall(head(M, S, A, _)),
    forall(member(H, Heads), assertz(head(M, S, A, H))),
    refresh_holds(M, S, A).

%!  refresh_holds(+M, +S, +A) is det.
%
%   Bring holds/4 and conflict/3 of a slot in line with its heads. holds/4 is
%   touched only when the resolved value changes, so tabled beliefs are not
%   invalidated needlessly.
refresh_holds(M, S, A) :-
    findall(V, ( head(M, S, A, H), fact(M, H, _, _, V, _, _, _, _, _) ), Vs0),
    list_to_set(Vs0, Vs),
    (   Vs = [V]
    ->  New = holds(V), retractall(conflict(M, S, A))
    ;   Vs == []
    ->  New = none, retractall(conflict(M, S, A))
    ;   New = conflict,
        ( conflict(M, S, A) -> true ; assertz(conflict(M, S, A)) )
    ),
    (   holds(M, S, A, Old)
    ->  (   New == holds(Old)
        ->  true
        ;   retractall(holds(M, S, A, _)),
            assert_holds(New, M, S, A)
        )
    ;   assert_holds(New, M, S, A)
    ).

assert_holds(holds(V), M, S, A) :- !,
    assertz(holds(M, S, A, V)).
assert_holds(_, _, _, _).

%!  check_link(+M, +F, +G, -Problem) is det.
%
%   Problem is ok, or the reason the explicit link F supersedes G is refused:
%   unknown_fact, cross_slot, lower_tier or cycle. The facts (and the links
%   of a batch being added) must already be visible.
check_link(M, F, G, Problem) :-
    (   \+ fact(M, G, _, _, _, _, _, _, _, _)
    ->  Problem = unknown_fact
    ;   fact(M, F, S, A, _, _, _, _, TF, _),
        fact(M, G, S2, A2, _, _, _, _, TG, _),
        (   S-A \== S2-A2
        ->  Problem = cross_slot
        ;   tier_rank(M, TF, RF), tier_rank(M, TG, RG), RF < RG
        ->  Problem = lower_tier
        ;   reaches(M, G, F, [G])
        ->  Problem = cycle
        ;   Problem = ok
        )
    ).

reaches(_, X, X, _) :- !.
reaches(M, X, Y, Seen) :-
    sup(M, X, Z),
    \+ memberchk(Z, Seen),
    reaches(M, Z, Y, [Z|Seen]), !.

%!  dominators(+M, +Id, -Ids) is det.
%
%   The live facts of Id's slot that dominate Id.
dominators(M, Id, Ids) :-
    fact(M, Id, S, A, _, _, _, _, _, _),
    findall(F, ( fact(M, F, S, A, _, _, _, _, _, _), F \== Id,
                 \+ retracted(M, F, _), dominates(M, F, Id) ), Ids).

%!  dominated(+M, +Id, -Ids) is det.
%
%   The live facts of Id's slot that Id dominates.
dominated(M, Id, Ids) :-
    fact(M, Id, S, A, _, _, _, _, _, _),
    findall(G, ( fact(M, G, S, A, _, _, _, _, _, _), G \== Id,
                 \+ retracted(M, G, _), dominates(M, Id, G) ), Ids).

%!  heads_at(+M, +S, +A, +KnownAt, +ValidAt, -Heads) is det.
%
%   The heads of a slot as the store knew it at transaction time KnownAt,
%   among the facts valid at ValidAt. Either time may be the atom none.
heads_at(M, S, A, KnownAt, ValidAt, Heads) :-
    findall(Id, ( fact(M, Id, S, A, _, VF, VT, RA, _, _),
                  known(KnownAt, RA),
                  \+ ( retracted(M, Id, RRA), known(KnownAt, RRA) ),
                  valid(ValidAt, VF, VT) ), Ids),
    heads_among(M, Ids, Heads).

known(none, _) :- !.
known(T, RA) :- RA =< T.

valid(none, _, _) :- !.
valid(T, VF, VT) :-
    VF =< T,
    ( VT == none -> true ; VT > T ).
