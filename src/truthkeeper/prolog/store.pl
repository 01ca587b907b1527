:- module(tk_store,
          [ fact/10,            % ?M, ?Id, ?S, ?A, ?V, ?VF, ?VT, ?RA, ?Tier, ?Src
            sup/3,              % ?M, ?F, ?G: F explicitly supersedes G
            retracted/3,        % ?M, ?Id, ?RA
            head/4,             % ?M, ?S, ?A, ?Id
            holds/4,            % ?M, ?S, ?A, ?V  (incremental: beliefs depend on it)
            conflict/3,         % ?M, ?S, ?A
            tier_rank/3,        % ?M, ?Tier, ?Rank
            mem_policy/2,       % ?M, ?Policy
            policy_name/1,      % ?Policy
            new_memory/3,       % +M, +Policy, +Tiers
            drop_memory/1,      % +M
            live/2,             % +M, ?Id
            record/3,           % +M, +Id, -Record
            slot_live/4,        % +M, +S, +A, -Ids
            fact_count/2        % +M, -Count
          ]).
:- use_module(library(error), [must_be/2, domain_error/2]).
:- use_module(library(lists), [nth1/3]).

/** <module> The fact store

Every Memory has an integer handle M; all its data lives in these dynamic
predicates, keyed by M, so several memories share one Prolog process without
seeing each other. Nothing is ever deleted from a live memory: a retraction
is a retracted/3 event. head/4, holds/4 and conflict/3 are maintained by
tk_dominance on every write; holds/4 is incremental so that tabled beliefs
(tk_tms) follow it.

Slots, ids, tiers and sources are atoms; values are atoms (strings), numbers,
or strings (JSON text of other values); times are integers (microseconds
since the epoch); VT is the atom none when the fact has no valid_to.
*/

:- dynamic fact/10.
:- dynamic sup/3.
:- dynamic retracted/3.
:- dynamic head/4.
:- dynamic holds/4 as incremental.
:- dynamic conflict/3.
:- dynamic tier_rank/3.
:- dynamic mem_policy/2.

%!  policy_name(?Policy) is nondet.
%
%   The policies that ship.
policy_name(temporal).
policy_name(authority_first).
policy_name(temporal_within_authority).

%!  new_memory(+M, +Policy, +Tiers) is det.
%
%   Register memory M with a policy and its tiers, most authoritative first.
%   @error domain_error(policy, Policy) for an unknown policy.
new_memory(M, Policy, Tiers) :-
    must_be(integer, M),
    must_be(atom, Policy),
    must_be(list(atom), Tiers),
    (   policy_name(Policy)
    ->  true
    ;   domain_error(policy, Policy)
    ),
    drop_memory(M),
    assertz(mem_policy(M, Policy)),
    length(Tiers, N),
    forall(nth1(I, Tiers, T),
           ( R is N - I, assertz(tier_rank(M, T, R)) )).

%!  drop_memory(+M) is det.
%
%   Forget everything memory M holds (used when a Memory is closed).
drop_memory(M) :-
    retractall(fact(M, _, _, _, _, _, _, _, _, _)),
    retractall(sup(M, _, _)),
    retractall(retracted(M, _, _)),
    retractall(head(M, _, _, _)),
    retractall(holds(M, _, _, _)),
    retractall(conflict(M, _, _)),
    retractall(tier_rank(M, _, _)),
    retractall(mem_policy(M, _)).

%!  live(+M, ?Id) is nondet.
%
%   Id is asserted and not retracted.
live(M, Id) :-
    fact(M, Id, _, _, _, _, _, _, _, _),
    \+ retracted(M, Id, _).

%!  record(+M, +Id, -Record) is semidet.
%
%   The policy record r(Id, Value, ValidFrom, RecordedAt, Rank) of a fact.
record(M, Id, r(Id, V, VF, RA, Rank)) :-
    fact(M, Id, _, _, V, VF, _, RA, Tier, _),
    tier_rank(M, Tier, Rank).

%!  slot_live(+M, +S, +A, -Ids) is det.
%
%   The live facts of a slot.
slot_live(M, S, A, Ids) :-
    findall(Id, ( fact(M, Id, S, A, _, _, _, _, _, _),
                  \+ retracted(M, Id, _) ), Ids).

%!  fact_count(+M, -Count) is det.
fact_count(M, N) :-
    aggregate_all(count, fact(M, _, _, _, _, _, _, _, _, _), N).
