:- module(policies,
          [ policy/1,             % ?Policy
            policy_dominates/3,   % +Policy, +RecordF, +RecordG
            may_dominate/3,       % +Policy, +RecordF, +RecordG
            monotone/1,           % ?Policy
            newer/2,              % +RecordF, +RecordG
            tier_ranks/2,         % +Tiers, -Pairs
            frontier/2,           % +RecordsNewestFirst, -Frontier
            newest_first/2        % +Records, -Sorted
          ]).
:- use_module(library(lists), [nth1/3, member/2]).
:- use_module(library(apply), [maplist/3]).

/** <module> The policy registry: every supersession policy, the tier order and the tie rule

This module is the only place where the meaning of a policy is written. Python
asks it (the list of policies, which pairs may dominate); the store, the
dominance relation, Phi_T and the kappa path all call policy_dominates/3 or
may_dominate/3 and nothing else.

A record is r(Id, Key, ValidFrom, RecordedAt, Rank, Source):

  - Key is the typed value key (atoms for strings, numbers, @(true), @(false),
    @(none), json(Text)); two records conflict (kappa) iff their keys differ (==).
  - ValidFrom is the valid time tau (integer microseconds).
  - RecordedAt is the transaction time, or the atom none for a retrieved
    candidate that the store never recorded.
  - Rank is the tier rank: larger is more authoritative (tier_ranks/2).
  - Source is the source atom, or @(none) for a candidate without one.

The tie rule (newer/2): F is newer than G iff tau(F) > tau(G), or the times are
equal, both come from the same source and F was recorded later (a
correction). Different sources at the same time are never ordered: recording
order never decides between two sources.

A policy is defined by one clause of order/3 (may F dominate G, ignoring
values); policy_dominates/3 adds kappa (the values differ). A policy is
monotone when, if F dominates G, every F2 of F's rank whose value differs from
G's and that is strictly newer than F also dominates G; tk phi uses a linear
sweep for monotone policies and a pairwise check otherwise.
*/

%!  policy(?Policy) is nondet.
%
%   The registered policies.
policy(temporal).
policy(authority_first).
policy(temporal_within_authority).

%!  monotone(?Policy) is nondet.
monotone(temporal).
monotone(authority_first).
monotone(temporal_within_authority).

%!  policy_dominates(+Policy, +F, +G) is semidet.
%
%   F makes G obsolete under Policy: their values differ (kappa) and the
%   policy's order lets F dominate G.
policy_dominates(P, F, G) :-
    arg(2, F, KF),
    arg(2, G, KG),
    KF \== KG,
    order(P, F, G).

%!  may_dominate(+Policy, +F, +G) is semidet.
%
%   The policy's order alone: F would dominate G if their values conflicted.
%   The kappa path asks this before calling a (costly) kappa.
may_dominate(P, F, G) :-
    order(P, F, G).

% order(+Policy, +F, +G): one clause per policy.
order(temporal, F, G) :-
    newer(F, G).
order(temporal_within_authority, F, G) :-
    arg(5, F, RF), arg(5, G, RG),
    RF >= RG,
    newer(F, G).
order(authority_first, F, G) :-
    arg(5, F, RF), arg(5, G, RG),
    (   RF > RG
    ->  true
    ;   RF =:= RG,
        newer(F, G)
    ).

%!  newer(+F, +G) is semidet.
%
%   The tie rule: strictly later valid time, or equal valid times from one
%   source with F recorded later.
newer(r(_, _, T1, RA1, _, S1), r(_, _, T2, RA2, _, S2)) :-
    (   T1 > T2
    ->  true
    ;   T1 =:= T2,
        S1 \== @(none), S1 == S2,
        integer(RA1), integer(RA2),
        RA1 > RA2
    ).

%!  tier_ranks(+Tiers, -Pairs) is det.
%
%   Tiers are given most authoritative first; Pairs are Tier-Rank with the
%   highest rank for the first tier (the tier order).
tier_ranks(Tiers, Pairs) :-
    length(Tiers, N),
    findall(T-R, ( nth1(I, Tiers, T), R is N - I ), Pairs).

%!  newest_first(+Records, -Sorted) is det.
%
%   Records sorted by valid time, newest first (then by recording, newest first).
newest_first(Rs, Sorted) :-
    findall((NT-NRA)-R, ( member(R, Rs), arg(3, R, T), NT is -T, arg(4, R, RA),
                         ( integer(RA) -> NRA is -RA ; NRA = 0 ) ), Keyed),
    keysort(Keyed, KS),
    findall(R, member(_-R, KS), Sorted).

%!  frontier(+RecordsNewestFirst, -Frontier) is det.
%
%   Per tier rank, the records up to the second distinct value and every
%   record tied in valid time with the last one taken. For a monotone policy,
%   a record that some record dominates is dominated by a member of the
%   frontier too: a frontier record of the dominator's rank that is strictly
%   newer than it and whose value differs from the dominated one exists
%   whenever the dominator is outside the frontier. So the frontier is all a
%   dominance check needs to look at (phi:phi_filter/3, dominance's heads).
frontier(Rs, Front) :-
    frontier(Rs, [], Front).

frontier([], _, []).
frontier([R|Rs], S0, Front) :-
    R = r(_, K, T, _, Rank, _),
    (   memberchk(Rank-s(Ks, Last), S0)
    ->  (   Ks = [_, _]
        ->  (   T =:= Last
            ->  Front = [R|Front1], S1 = S0
            ;   Front = Front1, S1 = S0
            )
        ;   Front = [R|Front1],
            ( memberchk_eq(K, Ks) -> Ks1 = Ks ; Ks1 = [K|Ks] ),
            replace_state(S0, Rank, s(Ks1, T), S1)
        )
    ;   Front = [R|Front1],
        S1 = [Rank-s([K], T)|S0]
    ),
    frontier(Rs, S1, Front1).

memberchk_eq(X, [Y|Ys]) :- ( X == Y -> true ; memberchk_eq(X, Ys) ).

replace_state([R0-St0|S0], R, St, S) :-
    (   R0 == R
    ->  S = [R0-St|S0]
    ;   S = [R0-St0|S1],
        replace_state(S0, R, St, S1)
    ).
