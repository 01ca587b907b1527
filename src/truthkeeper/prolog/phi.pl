:- module(tk_phi,
          [ phi_filter/3          % +Policy, +Candidates, -Drops
          ]).
:- use_module(library(pairs), [group_pairs_by_key/2, pairs_values/2]).
:- use_module(library(assoc), [empty_assoc/1, get_assoc/3, put_assoc/4, assoc_to_list/2]).
:- use_module(library(lists), [member/2]).
:- use_module(library(apply), [foldl/4]).

/** <module> The dominance filter over a retrieved context (Phi_T and its policy variants)

Candidates are c(Index, SlotKey, Value, Tau, Rank). A candidate is dropped
when another candidate of the same slot with a different value dominates it
under the policy (temporal = Phi_T: strictly newer; temporal_within_authority:
strictly newer and of a tier at least as high; authority_first: a higher tier,
or the same tier and strictly newer). Equal times dominate neither way.

Cost: O(k log k + k * T) for k candidates and T tiers, never quadratic in k:
per slot, candidates are swept newest first while the newest two distinct
values seen so far are kept per tier rank.
*/

%!  phi_filter(+Policy, +Candidates, -Drops) is det.
%
%   Drops is a list of Index-DominatorIndex pairs.
phi_filter(Policy, Cands, Drops) :-
    findall(K-C, ( member(C0, Cands), normalise(Policy, C0, C), C = c(_, K, _, _, _) ), KCs),
    keysort(KCs, Sorted),
    group_pairs_by_key(Sorted, Groups),
    foldl(slot_drops(Policy), Groups, Drops0, []),
    sort(1, @<, Drops0, Drops).                 % one dominator per dropped index

normalise(temporal, c(I, K, V, T, _), c(I, K, V, T, 0)) :- !.
normalise(_, C, C).

slot_drops(Policy, _-Cs, Drops, Tail) :-
    findall(NT-C, ( member(C, Cs), C = c(_, _, _, T, _), NT is -T ), TCs),
    keysort(TCs, ByTime),                     % newest first
    group_pairs_by_key(ByTime, TimeGroups),
    empty_assoc(S0),
    sweep(TimeGroups, Policy, S0, S, Drops, Tail1),
    (   Policy == authority_first
    ->  pairs_values(ByTime, All),
        higher_tier_drops(All, S, Tail1, Tail)
    ;   Tail1 = Tail
    ).

% sweep(+TimeGroups, +Policy, +State0, -State, -Drops, ?Tail)
sweep([], _, S, S, T, T).
sweep([_-Group|Rest], P, S0, S, Drops, Tail) :-
    check_group(Group, P, S0, Drops, Mid),
    foldl(add_state, Group, S0, S1),
    sweep(Rest, P, S1, S, Mid, Tail).

check_group([], _, _, T, T).
check_group([C|Cs], P, S, Drops, Tail) :-
    (   in_sweep_dominator(P, C, S, D)
    ->  C = c(I, _, _, _, _), Drops = [I-D|Mid]
    ;   Drops = Mid
    ),
    check_group(Cs, P, S, Mid, Tail).

in_sweep_dominator(P, c(_, _, V, _, R), S, D) :-
    assoc_to_list(S, RankStates),
    member(R2-St, RankStates),
    rank_ok(P, R2, R),
    other_value(St, V, D), !.

rank_ok(authority_first, R2, R) :- !, R2 =:= R.
rank_ok(_, R2, R) :- R2 >= R.

% other_value(+State, +V, -Index): the newest candidate of the state whose value differs from V
other_value(s(b(V1, I1), B2), V, D) :-
    (   V1 \== V
    ->  D = I1
    ;   B2 = b(_, D)
    ).

add_state(c(I, _, V, _, R), S0, S) :-
    (   get_assoc(R, S0, St0)
    ->  true
    ;   St0 = s(none, none)
    ),
    push(St0, V, I, St),
    put_assoc(R, S0, St, S).

push(s(none, none), V, I, s(b(V, I), none)) :- !.
push(s(b(V1, I1), none), V, I, St) :- !,
    ( V1 \== V -> St = s(b(V1, I1), b(V, I)) ; St = s(b(V1, I1), none) ).
push(St, _, _, St).

higher_tier_drops([], _, T, T).
higher_tier_drops([C|Cs], S, Drops, Tail) :-
    C = c(I, _, V, _, R),
    (   assoc_to_list(S, RankStates),
        member(R2-St, RankStates), R2 > R,
        other_value(St, V, D)
    ->  Drops = [I-D|Mid]
    ;   Drops = Mid
    ),
    higher_tier_drops(Cs, S, Mid, Tail).
