:- module(tk_phi,
          [ phi_filter/3          % +Policy, +Candidates, -Drops
          ]).
:- use_module(library(lists), [member/2]).

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
%   Drops is a list of Index-DominatorIndex pairs, one per dropped index.
phi_filter(Policy, Cands, Drops) :-
    keyed(Cands, Policy, KCs),
    keysort(KCs, Sorted),                       % by slot, then newest first
    slots(Sorted, Policy, Drops0, []),
    sort(1, @<, Drops0, Drops).

% Key = Slot-NegTau so one keysort groups slots and orders each newest first.
keyed([], _, []).
keyed([c(I, K, V, T, R0)|Cs], P, [(K-NT)-c(I, V, T, R)|KCs]) :-
    NT is -T,
    ( P == temporal -> R = 0 ; R = R0 ),
    keyed(Cs, P, KCs).

slots([], _, D, D).
slots([(K-_)-C|Rest], P, D0, D) :-
    take_slot(Rest, K, Cs, Rest1),
    slot_drops(P, [C|Cs], D0, D1),
    slots(Rest1, P, D1, D).

take_slot([(K0-_)-C|Rest], K, [C|Cs], Rest1) :-
    K0 == K, !,
    take_slot(Rest, K, Cs, Rest1).
take_slot(Rest, _, [], Rest).

% slot_drops(+Policy, +CandsNewestFirst, -Drops, ?Tail)
slot_drops(P, Cs, D0, D) :-
    sweep(Cs, P, [], State, D0, D1),
    (   P == authority_first
    ->  higher_tier_drops(Cs, State, D1, D)
    ;   D1 = D
    ).

% State: a list of Rank-s(B1, B2), the newest two distinct values seen per rank.
% Candidates of equal time are checked against the state before any of them is added.
sweep([], _, S, S, D, D).
sweep([C|Cs], P, S0, S, D0, D) :-
    C = c(_, _, T, _),
    same_time(Cs, T, Same, Rest),
    check_group([C|Same], P, S0, D0, D1),
    add_all([C|Same], S0, S1),
    sweep(Rest, P, S1, S, D1, D).

same_time([C|Cs], T, [C|Same], Rest) :-
    C = c(_, _, T1, _), T1 =:= T, !,
    same_time(Cs, T, Same, Rest).
same_time(Rest, _, [], Rest).

check_group([], _, _, D, D).
check_group([c(I, V, _, R)|Cs], P, S, D0, D) :-
    (   member(R2-St, S),
        rank_ok(P, R2, R),
        other_value(St, V, By)
    ->  D0 = [I-By|D1]
    ;   D0 = D1
    ),
    check_group(Cs, P, S, D1, D).

rank_ok(authority_first, R2, R) :- !, R2 =:= R.
rank_ok(_, R2, R) :- R2 >= R.

% other_value(+State, +V, -Index): the newest candidate of the state whose value differs from V
other_value(s(b(V1, I1), B2), V, D) :-
    (   V1 \== V
    ->  D = I1
    ;   B2 = b(_, D)
    ).

add_all([], S, S).
add_all([c(I, V, _, R)|Cs], S0, S) :-
    add_state(S0, R, V, I, S1),
    add_all(Cs, S1, S).

add_state([], R, V, I, [R-s(b(V, I), none)]).
add_state([R0-St0|S0], R, V, I, S) :-
    (   R0 =:= R
    ->  push(St0, V, I, St), S = [R0-St|S0]
    ;   S = [R0-St0|S1],
        add_state(S0, R, V, I, S1)
    ).

push(s(b(V1, I1), none), V, I, St) :- !,
    ( V1 \== V -> St = s(b(V1, I1), b(V, I)) ; St = s(b(V1, I1), none) ).
push(St, _, _, St).

higher_tier_drops([], _, D, D).
higher_tier_drops([c(I, V, _, R)|Cs], S, D0, D) :-
    (   member(R2-St, S), R2 > R,
        other_value(St, V, By)
    ->  D0 = [I-By|D1]
    ;   D0 = D1
    ),
    higher_tier_drops(Cs, S, D1, D).
