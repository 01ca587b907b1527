:- module(phi,
          [ phi_filter/3          % +Policy, +Candidates, -Drops
          ]).
:- use_module(policies, [policy_dominates/3, monotone/1, frontier/2, confirmation_source/1]).
:- use_module(library(lists), [member/2]).


/** <module> The dominance filter over a retrieved context (Phi_T and its policy variants)

Candidates are c(Index, SlotKey, Record) with Record a policy record (see
policies). A candidate is dropped when another candidate of the same slot
dominates it under the policy (policies:policy_dominates/3, the only
definition of dominance); with the temporal policy this is Phi_T.

Cost, for a monotone policy: O(k log k + k * F) for k candidates, F the
frontier size (two distinct values per tier rank plus ties): per slot the
candidates are sorted newest first and each is checked against the frontier
only. A candidate outside the frontier never needs checking as a dominator:
a frontier item of its rank, strictly newer and of a value different from
the dominated one, dominates too (policies:monotone/1). Other policies are
checked pairwise within each slot.
*/

:- det(phi_filter/3).

%!  phi_filter(+Policy, +Candidates, -Drops) is det.
%
%   Drops is a list of Index-DominatorIndex pairs, one per dropped index, by
%   index.
phi_filter(Policy, Cands, Drops) :-
    findall((K-NT)-R, ( member(c(_, K, R), Cands), arg(3, R, T), NT is -T ), Keyed),
    keysort(Keyed, Sorted),                       % by slot, then newest first
    slots(Sorted, Policy, Drops0),
    sort(1, @<, Drops0, Drops).

slots([], _, []).
slots([(K-_)-R|Rest], P, Drops) :-
    take_slot(Rest, K, Rs, Rest1),
    slot_drops(P, [R|Rs], D0),
    slots(Rest1, P, D1),
    append_(D0, D1, Drops).

append_([], L, L).
append_([H|T], L, [H|R]) :- append_(T, L, R).

take_slot([(K0-_)-R|Rest], K, [R|Rs], Rest1) :-
    K0 == K, !,
    take_slot(Rest, K, Rs, Rest1).
take_slot(Rest, _, [], Rest).

% slot_drops(+Policy, +RecordsNewestFirst, -Drops)
slot_drops(P, Rs, Drops) :-
    (   monotone(P),
        \+ ( member(R, Rs), arg(2, R, m(_, _)) ),  % a set's members: pairwise
        \+ ( member(R, Rs), arg(6, R, Src), confirmation_source(Src) )  % and confirmations
    ->  frontier(Rs, Front)
    ;   Front = Rs
    ),
    findall(I-J, ( member(G, Rs), arg(1, G, I),
                   once(( member(F, Front), arg(1, F, J), J \== I,
                          policy_dominates(P, F, G) )) ), Drops).
