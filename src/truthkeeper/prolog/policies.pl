:- module(policies,
          [ policy/1,             % ?Policy
            shipped/1,            % ?Policy (one of truthkeeper's own; never raises)
            register_policy/3,    % +Name, +Text, +MetaKeys
            policy_meta_keys/2,   % ?Policy, ?Keys
            policy_dominates/3,   % +Policy, +RecordF, +RecordG
            may_dominate/3,       % +Policy, +RecordF, +RecordG
            monotone/1,           % ?Policy
            newer/2,              % +RecordF, +RecordG
            tier_ranks/2,         % +Tiers, -Pairs
            frontier/2,           % +RecordsNewestFirst, -Frontier
            heads_by_frontier/4,  % +Policy, +Records, -HeadIds, -Frontier
            pure_builtin/1,       % ?PI
            guarded/2,            % +Budget, +Goal
            new_budget/1,         % +Budget
            confirmation_source/1, % +Source
            other_members/2,      % +KeyF, +KeyG
            newest_first/2,       % +Records, -Sorted
            insert_newest/3,      % +Record, +SortedNewestFirst, -Sorted
            front_index/2,        % +Frontier, -Index
            front_dominated/3,    % +Policy, +Index, +Record
            front_dominator/4     % +Policy, +Index, +Record, -Dominator
          ]).
:- use_module(library(lists), [nth1/3, member/2, reverse/2, clumped/2]).
:- use_module(library(assoc), [list_to_assoc/2, get_assoc/3]).
:- use_module(library(error), [domain_error/2, permission_error/3]).
:- use_module(library(apply), [maplist/3, partition/4]).
:- use_module(library(pairs), [pairs_keys/2, pairs_values/2, map_list_to_pairs/3,
                                group_pairs_by_key/2]).

:- det(register_policy/3).
:- det(tier_ranks/2).
:- det(newest_first/2).
:- det(insert_newest/3).
:- det(frontier/2).
:- det(front_index/2).
:- det(heads_by_frontier/4).

/** <module> The policy registry: every supersession policy, the tier order and the tie rule

This module is the only place where the meaning of a policy is written. Python
asks it (the list of policies, which pairs may dominate); the store, the
dominance relation, Phi_T and the kappa path all call policy_dominates/3 or
may_dominate/3 and nothing else.

A record is r(Id, Key, ValidFrom, RecordedAt, Rank, Source, Meta):

  - Key is the typed value key (atoms for strings, numbers, @(true), @(false),
    @(none), json(Text)); two records conflict (kappa) iff their keys differ (==).
    In a set-valued attribute the key is m(Member, Presence): records about two
    members never conflict; a record that a member left (0) conflicts with one
    that it is in (1).
  - ValidFrom is the valid time tau (integer microseconds).
  - RecordedAt is the transaction time, or the atom none for a retrieved
    candidate that the store never recorded.
  - Rank is the tier rank: larger is more authoritative (tier_ranks/2).
  - Source is the source atom, or @(none) for a candidate without one.
  - Meta is a list of MetaKey-ValueKey pairs for the meta keys a custom policy
    declared (empty for the shipped policies and for candidates).

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
policy(P) :- shipped(P).
policy(P) :- custom_policy(P, _, _).

%!  shipped(?Policy) is nondet.
%
%   A policy truthkeeper ships (its order is code, not a user's text: it never raises).
shipped(temporal).
shipped(authority_first).
shipped(temporal_within_authority).

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
    \+ other_members(KF, KG),
    standing_order(P, F, G).

% standing_order(+P, +F, +G): a confirmation (Memory.confirm) dominates every fact of a
% lower rank, whatever the times, and no fact of a lower rank dominates it; otherwise the
% policy's order decides. So a confirmed value stands until newer evidence of at least the
% confirmer's standing, under every policy.
standing_order(P, F, G) :-
    rank(F, RF), rank(G, RG),
    (   RF > RG, confirmation(F)
    ->  true
    ;   RF < RG, confirmation(G)
    ->  fail
    ;   shipped(P)
    ->  order(P, F, G)
    ;   custom_order(P, F, G)
    ).

%!  confirmation_source(+Source) is semidet.
%
%   The source of a confirmation fact (confirmation:Tier).
confirmation_source(S) :-
    atom(S),
    sub_atom(S, 0, _, _, 'confirmation:').

confirmation(F) :-
    source(F, S),
    confirmation_source(S).

%!  may_dominate(+Policy, +F, +G) is semidet.
%
%   The policy's order alone: F would dominate G if their values conflicted.
%   The kappa path asks this before calling a (costly) kappa.
may_dominate(P, F, G) :-
    \+ ( arg(2, F, KF), arg(2, G, KG), other_members(KF, KG) ),
    standing_order(P, F, G).

%!  other_members(+KF, +KG) is semidet.
%
% The keys are about two different members of a set (a
% set-valued attribute's keys are m(Member, Presence)): such claims never conflict, under
% every policy; only a claim about the same member with the other presence does.
other_members(m(A, _), m(B, _)) :- A \== B.

% order(+Policy, +F, +G): one clause per shipped policy, written in the policy language
% below (the same form a user's policy takes: `dominates(F, G) :- Body`, with `differs`
% left to policy_dominates/3); custom policies are interpreted by custom_order/3.
order(temporal, F, G) :-
    newer(F, G).
order(temporal_within_authority, F, G) :-
    rank(F, RF), rank(G, RG),
    RF >= RG,
    newer(F, G).
order(authority_first, F, G) :-
    rank(F, RF), rank(G, RG),
    (   RF > RG
    ->  true
    ;   RF =:= RG,
        newer(F, G)
    ).
% ---------------------------------------------------------------- the policy language
%
% A policy is one or more clauses `dominates(F, G) :- Body` where F and G are fact records.
% The body may call the accessors below, the tie rule newer/2, and comparisons,
% arithmetic and a few pure builtins (the same allow-list as rules); nothing else.

%!  value(+F, -Key) is det.       the typed value key
%!  valid_from(+F, -T) is det.    valid time, microseconds
%!  recorded_at(+F, -T) is semidet. transaction time (fails for a retrieved candidate)
%!  source(+F, -S) is semidet.    the source atom (fails for a candidate without one)
%!  rank(+F, -R) is det.          the tier rank, larger is more authoritative
%!  meta(+F, +Key, -Value) is semidet. a meta value the policy declared
%!  differs(+F, +G) is semidet.   kappa: the values differ
%!  same_source(+F, +G) is semidet.
value(r(_, K, _, _, _, _, _), K).
valid_from(r(_, _, T, _, _, _, _), T).
recorded_at(r(_, _, _, RA, _, _, _), RA) :- integer(RA).
source(r(_, _, _, _, _, S, _), S) :- S \== @(none).
rank(r(_, _, _, _, R, _, _), R).
meta(r(_, _, _, _, _, _, Ms), Key, V) :- memberchk(Key-V, Ms).
differs(F, G) :- arg(2, F, KF), arg(2, G, KG), KF \== KG.
same_source(F, G) :- source(F, S), source(G, S2), S == S2.

accessor_pi(value/2). accessor_pi(valid_from/2). accessor_pi(recorded_at/2).
accessor_pi(source/2). accessor_pi(rank/2). accessor_pi(meta/3).
accessor_pi(differs/2). accessor_pi(same_source/2). accessor_pi(newer/2).

:- dynamic custom_policy/3.     % Name, Clauses (dominates(F, G)-Body), MetaKeys

%!  register_policy(+Name, +Text, +MetaKeys) is det.
%
%   Parse a user's policy (never consulted) and register it under Name.
%   Registering the same text again is allowed; another text under a taken
%   name is refused.
%   @error permission_error(modify, policy, Name) for a shipped or taken name
%   @error domain_error(policy_clause, C) for a clause that is not dominates/2
%   @error permission_error(call, policy_goal, PI) for a goal policies may not call
register_policy(Name, Text, MetaKeys) :-
    parse_clauses(Text, Clauses),
    (   member(_-B, Clauses), undeclared_meta(B, MetaKeys, Key)
    ->  domain_error(declared_meta_key, Key)
    ;   true
    ),
    (   custom_policy(Name, Clauses0, Keys0)
    ->  (   Clauses0 =@= Clauses, Keys0 == MetaKeys
        ->  true
        ;   permission_error(modify, policy, Name)
        )
    ;   shipped(Name)
    ->  permission_error(modify, policy, Name)
    ;   assertz(custom_policy(Name, Clauses, MetaKeys))
    ).

parse_clauses(Text, Clauses) :-
    setup_call_cleanup(open_string(Text, S), read_all(S, Terms), close(S)),
    (   Terms == []
    ->  domain_error(policy_clause, empty)
    ;   true
    ),
    maplist(policy_clause, Terms, Clauses).

read_all(S, Terms) :-
    read_term(S, T, [syntax_errors(error)]),
    (   T == end_of_file
    ->  Terms = []
    ;   Terms = [T|Ts],
        read_all(S, Ts)
    ).

policy_clause(T, dominates(F, G)-B) :-
    (   nonvar(T), T = (H :- B0) -> true ; H = T, B0 = true ),
    (   nonvar(H), H = dominates(F, G)
    ->  true
    ;   domain_error(policy_clause, H)
    ),
    (   bad_goal(B0, Bad)
    ->  permission_error(call, policy_goal, Bad)
    ;   B = B0
    ).

% undeclared_meta(+Body, +Keys, -Key): Body reads meta(F, Key, V) for a key the policy did
% not declare (it would never be seen: the store passes only declared keys).
undeclared_meta(V, _, _) :- var(V), !, fail.
undeclared_meta((A, B), Ks, K) :- !, ( undeclared_meta(A, Ks, K) ; undeclared_meta(B, Ks, K) ).
undeclared_meta((A ; B), Ks, K) :- !, ( undeclared_meta(A, Ks, K) ; undeclared_meta(B, Ks, K) ).
undeclared_meta((A -> B), Ks, K) :- !, ( undeclared_meta(A, Ks, K) ; undeclared_meta(B, Ks, K) ).
undeclared_meta(\+ A, Ks, K) :- !, undeclared_meta(A, Ks, K).
undeclared_meta(meta(_, K0, _), Ks, K) :- !,
    ( var(K0) -> K = K0 ; \+ memberchk(K0, Ks), K = K0 ).

bad_goal(V, V) :- var(V), !.
bad_goal((A, B), Bad) :- !, ( bad_goal(A, Bad) -> true ; bad_goal(B, Bad) ).
bad_goal((A ; B), Bad) :- !, ( bad_goal(A, Bad) -> true ; bad_goal(B, Bad) ).
bad_goal((A -> B), Bad) :- !, ( bad_goal(A, Bad) -> true ; bad_goal(B, Bad) ).
bad_goal(\+ A, Bad) :- !, bad_goal(A, Bad).
bad_goal(true, _) :- !, fail.
bad_goal(G, N/A) :- callable(G), functor(G, N, A),
    \+ accessor_pi(N/A), \+ pure_builtin(N/A), !.
bad_goal(G, G) :- \+ callable(G).

%!  pure_builtin(?PI) is nondet.
%
%   The builtins a policy body may call: tests, comparisons, arithmetic, type
%   checks and a few atom predicates, all of which terminate. Rule bodies (tms)
%   may call these and a few generators besides.
pure_builtin((==)/2).   pure_builtin((\==)/2).  pure_builtin((=)/2).
pure_builtin((\=)/2).   pure_builtin((<)/2).    pure_builtin((>)/2).
pure_builtin((=<)/2).   pure_builtin((>=)/2).   pure_builtin((=:=)/2).
pure_builtin((=\=)/2).  pure_builtin((is)/2).   pure_builtin((@<)/2).
pure_builtin((@>)/2).   pure_builtin((@=<)/2).  pure_builtin((@>=)/2).
pure_builtin(atom/1).   pure_builtin(number/1). pure_builtin(integer/1).
pure_builtin(float/1).  pure_builtin(string/1). pure_builtin(atomic/1).
pure_builtin(memberchk/2). pure_builtin(sub_atom/5). pure_builtin(atom_length/2).
pure_builtin(atom_concat/3). pure_builtin(atom_number/2).
pure_builtin(fail/0).   pure_builtin(false/0).

% ---------------------------------------------------------------- bounds
%
% A policy or rule body runs within an inference budget (its caller's), and its
% builtins within a budget of the memory they create: the bytes of the atoms
% they make and the cells of the lists they build (budget_bytes/1), so that no
% body can grow the atom table or the stacks until the process dies. Integers
% are bounded by the max_integer_size flag (set below; stored values are 64-bit).

:- initialization(set_prolog_flag(max_integer_size, 4096)).

%!  budget_bytes(-Bytes) is det.
%
%   The memory one evaluation's builtins may create (a rule evaluation, or a
%   policy deciding one pair).
budget_bytes(16_000_000).

%!  new_budget(+Budget) is det.
%
%   Start an evaluation: Budget (an atom naming a thread-local global variable)
%   holds budget_bytes/1 again.
new_budget(Budget) :-
    budget_bytes(B),
    nb_setval(Budget, B).

spend(Budget, N) :-
    (   nb_current(Budget, Left0) -> true ; budget_bytes(Left0) ),
    Left is Left0 - N,
    (   Left < 0
    ->  throw(error(resource_error(evaluation_memory), _))
    ;   nb_setval(Budget, Left)
    ).

%!  guarded(+Budget, +Goal) is nondet.
%
%   Call a builtin of a policy or rule body (pure_builtin/1, or a rule's
%   generators), charging what it creates to Budget:
%   resource_error(evaluation_memory) past it. A length/2 that would enumerate
%   lists without end (a partial list, no length) is refused.
guarded(B, atom_concat(X, Y, Z)) :- !,
    (   atomic(X), atomic(Y)
    ->  atom_length(X, NX), atom_length(Y, NY), spend(B, NX + NY),
        atom_concat(X, Y, Z)
    ;   atom_concat(X, Y, Z),
        atom_length(Z, N), spend(B, N)
    ).
guarded(B, sub_atom(A, Bf, L, Af, S)) :- !,
    (   var(S)
    ->  sub_atom(A, Bf, L, Af, S), atom_length(S, N), spend(B, N)
    ;   sub_atom(A, Bf, L, Af, S)
    ).
guarded(B, length(L, N)) :- !,
    (   integer(N)
    ->  spend(B, N * 24)
    ;   is_list(L)
    ->  true
    ;   var(N)
    ->  domain_error(list_or_length, L)
    ;   true
    ),
    length(L, N).
guarded(_, G) :-
    call(G).

%!  policy_meta_keys(?Policy, ?Keys) is nondet.
%
%   The meta keys a policy reads (none for the shipped ones).
policy_meta_keys(P, Keys) :-
    (   custom_policy(P, _, Keys0)
    ->  Keys = Keys0
    ;   shipped(P),
        Keys = []
    ).

% custom_order(+P, +F, +G): a custom policy's clauses, interpreted, within a budget.
custom_order(P, F, G) :-
    custom_policy(P, Clauses, _),
    new_budget(tk_policy_budget),
    catch(call_with_inference_limit(
              once(( member(dominates(F0, G0)-B, Clauses),
                     copy_term(dominates(F0, G0)-B, dominates(F, G)-B1),
                     run(B1) )), 100000, R),
          E, policy_failed(P, E)),
    (   R == inference_limit_exceeded
    ->  policy_failed(P, limit)
    ;   true
    ).

run(true) :- !.
run((A, B)) :- !, run(A), run(B).
run((C -> T ; E)) :- !, ( run(C) -> run(T) ; run(E) ).
run((A ; B)) :- !, ( run(A) ; run(B) ).
run((C -> T)) :- !, ( run(C) -> run(T) ).
run(\+ G) :- !, \+ run(G).
run(G) :- guarded(tk_policy_budget, G).

policy_failed(P, E) :-
    (   E == limit
    ->  format(string(Msg), "policy ~q took more than 100,000 inferences deciding one pair", [P])
    ;   E = error(Formal, _)
    ->  format(string(Msg), "policy ~q raised ~q while deciding a pair", [P, Formal])
    ;   format(string(Msg), "policy ~q raised ~q while deciding a pair", [P, E])
    ),
    throw(error(rule_error(Msg), _)).

%!  newer(+F, +G) is semidet.
%
%   The tie rule: strictly later valid time, or equal valid times from one
%   source with F recorded later.
newer(r(_, _, T1, RA1, _, S1, _), r(_, _, T2, RA2, _, S2, _)) :-
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
    maplist(newest_keyed, Rs, Keyed),            % no findall: the records are not copied
    keysort(Keyed, KS),
    pairs_values(KS, Sorted).

newest_keyed(R, (NT-NRA)-R) :-
    arg(3, R, T), NT is -T, arg(4, R, RA),
    ( integer(RA) -> NRA is -RA ; NRA = 0 ).

%!  insert_newest(+Record, +Sorted0, -Sorted) is det.
%
%   newest_first([Record|Sorted0], Sorted) for a Sorted0 already newest first (a slot's
%   frontier), in one pass: Record goes before the first record not strictly newer.
insert_newest(R, Sorted0, Sorted) :-
    order_key(R, KR),
    insert_keyed(Sorted0, R, KR, Sorted).

insert_keyed([], R, _, [R]).
insert_keyed([X|Xs], R, KR, Out) :-
    order_key(X, KX),
    (   KX @< KR
    ->  Out = [X|Out1],
        insert_keyed(Xs, R, KR, Out1)
    ;   Out = [R, X|Xs]
    ).

order_key(R, NT-NRA) :-
    arg(3, R, T), NT is -T, arg(4, R, RA),
    ( integer(RA) -> NRA is -RA ; NRA = 0 ).

%!  frontier(+RecordsNewestFirst, -Frontier) is det.
%
%   Per tier rank, the newest record of the newest value and of the second
%   distinct value, each with every record tied in valid time with it. For a
%   monotone policy, a record that some record dominates is dominated by a member
%   of the frontier too: a frontier record of the dominator's rank that is
%   strictly newer than it and whose value differs from the dominated one exists
%   whenever the dominator is outside the frontier (an older record of a value
%   the frontier holds has such a record: the newer one of its own value). So the
%   frontier is all a dominance check needs to look at (phi:phi_filter/3,
%   dominance's heads), and it stays so as records are added to the slot. Many
%   sources that agree (n records of one value at n times) leave one record, not
%   n: each checked against all of them was n^2 (4,000: 20 s for a first read).
frontier(Rs, Front) :-
    frontier(Rs, [], Front).

frontier([], _, []).
frontier([R|Rs], S0, Front) :-
    R = r(_, K, T, _, Rank, _, _),
    (   memberchk(Rank-s(Ks, Last), S0)
    ->  (   Ks = [_, _]
        ->  (   T =:= Last
            ->  Front = [R|Front1], S1 = S0
            ;   Front = Front1, S1 = S0
            )
        ;   memberchk_eq(K, Ks)                   % the newest value again
        ->  (   T =:= Last
            ->  Front = [R|Front1], S1 = S0
            ;   Front = Front1, S1 = S0           % a newer record of its value is in
            )
        ;   Front = [R|Front1],
            replace_state(S0, Rank, s([K|Ks], T), S1)
        )
    ;   Front = [R|Front1],
        S1 = [Rank-s([K], T)|S0]
    ),
    frontier(Rs, S1, Front1).

memberchk_eq(X, [Y|Ys]) :- ( X == Y -> true ; memberchk_eq(X, Ys) ).

%!  heads_by_frontier(+P, +Records, -HeadIds, -Front) is det.
%
%   Under a monotone policy P (records of one slot, no explicit link among them): the
%   ids of the records no record of their frontier dominates, and that frontier.
heads_by_frontier(P, Recs, Heads, Front) :-
    newest_first(Recs, Sorted),
    frontier(Sorted, Front),
    front_index(Front, Index),
    findall(Id, ( member(R, Recs), arg(1, R, Id),
                  \+ front_dominated(P, Index, R) ), Heads).

%!  front_index(+Front, -Index) is det.
%
%   A frontier made ready for front_dominated/3: as it is when small; grouped by valid
%   time and tier rank when large, which only ties make it (n sources claiming n values
%   at one time, or about one set's member: each record checked against every other).
%   Confirmations (a scope's view over a poll, confirmed) are kept apart, asked first:
%   they dominate by rank whatever the times, so no group stands for them.
front_index(Front, Index) :-
    partition(confirmation, Front, Confs, Rest),
    (   Rest = [R0, _, _, _, _, _, _, _, _|_],   % of one set's member, or of no set
        \+ ( arg(2, R0, K0), member(R, Rest), arg(2, R, K), \+ one_kind(K0, K) )
    ->  map_list_to_pairs(time_rank, Rest, Keyed),
        keysort(Keyed, Sorted),
        group_pairs_by_key(Sorted, Groups),
        maplist(front_group, Groups, Gs),
        ( Confs == [] -> Index = groups(Gs) ; Index = confs(Confs, groups(Gs)) )
    ;   Index = list(Front)
    ).

time_rank(r(_, _, T, _, Rank, _, _), T-Rank).
one_kind(K0, K) :- ( K0 = m(V, _) -> K = m(W, _), V == W ; K \= m(_, _) ).

% front_group(+Key-Records, -Group): g(Own, Others, Count) of the records of one valid
% time and rank: Own, each source's own(Newest, NewestOfAnotherValue or none); Others,
% by value or by source (whichever are fewer) for a record of another source and value
% (one source's thousand corrections at one time each looked through every value: n^2,
% 5.4 s at 4,000); Count, the records of each value, source and pair: a record that no
% record of another source and value stands against asks nothing more.
front_group(_-Rs, g(Own, Others, c(N, VC, SC, PC))) :-
    length(Rs, N),
    map_list_to_pairs(source_of, Rs, BySrc0), keysort(BySrc0, BySrc1),
    group_pairs_by_key(BySrc1, BySrc),
    maplist(own_newest, BySrc, Owns), list_to_assoc(Owns, Own),
    map_list_to_pairs(value, Rs, ByVal0), keysort(ByVal0, ByVal1),
    group_pairs_by_key(ByVal1, ByVal),
    length(BySrc, NS), length(ByVal, NV),
    ( NV =< NS -> Others = by_value(ByVal) ; Others = by_source(Owns) ),
    maplist(key_count, ByVal, VC0), list_to_assoc(VC0, VC),
    maplist(key_count, BySrc, SC0), list_to_assoc(SC0, SC),
    map_list_to_pairs(value_source, Rs, VS0), msort(VS0, VS1),
    pairs_keys(VS1, VSs), clumped(VSs, PC0), list_to_assoc(PC0, PC).

source_of(R, S) :- arg(6, R, S).
value_source(R, K-S) :- arg(2, R, K), arg(6, R, S).
key_count(K-Xs, K-C) :- length(Xs, C).

% own_newest(+Source-Records, -Source-own(Newest, Other)): its record recorded last, and
% its record recorded last of another value than that one's (none without)
own_newest(S-Rs, S-own(N1, N2)) :-
    map_list_to_pairs(ra_key, Rs, Keyed), keysort(Keyed, Asc), pairs_values(Asc, Up),
    reverse(Up, [N1|Older]), arg(2, N1, K1),
    ( member(N2, Older), arg(2, N2, K2), K2 \== K1 -> true ; N2 = none ).

ra_key(R, RA) :- arg(4, R, RA0), ( integer(RA0) -> RA = RA0 ; RA = -1 ).

% other_record(+Group, +KR, +SR, -F): a record of another value than KR and of another
% source than SR (of any source when SR is none), when there is one
other_record(g(_, Others, c(N, VC, SC, PC)), KR, SR, F) :-
    counted(VC, KR, CV),
    (   SR == @(none)
    ->  N - CV > 0
    ;   counted(SC, SR, CS), counted(PC, KR-SR, CP), N - CV - CS + CP > 0
    ),
    once(other_in(Others, KR, SR, F)).

counted(A, K, C) :- ( get_assoc(K, A, C0) -> C = C0 ; C = 0 ).

other_in(by_value(ByVal), KR, SR, F) :-
    member(K-Rs, ByVal), K \== KR, member(F, Rs), arg(6, F, S), ( S \== SR ; SR == @(none) ).
other_in(by_source(Owns), KR, SR, F) :-
    member(S-own(N1, N2), Owns), ( S \== SR ; SR == @(none) ),
    ( arg(2, N1, K1), K1 \== KR -> F = N1 ; N2 \== none, F = N2 ).

%!  front_dominated(+P, +Index, +R) is semidet.
%
%   Some record of the frontier (front_index/2) dominates R under the monotone policy P:
%   member(F, Front), policy_dominates(P, F, R).
front_dominated(P, Index, R) :-
    front_dominator(P, Index, R, _).

%!  front_dominator(+P, +Index, +R, -F) is semidet.
%
%   F is a record of the frontier that dominates R: of a list, the first; of groups, one
%   of the first group (in Index's order) that holds one. In a group of one valid time and
%   rank (no confirmation, no set: front_index/2 groups none), every record of a source
%   other than R's stands towards R as the others do, since an order reads a record's
%   source only through newer/2's restatement by the same source and confirmation/1: one
%   of them that holds another value than R is asked; of R's own source, the one recorded
%   last of another value.
front_dominator(P, confs(Confs, Groups), R, F) :-
    (   member(F, Confs), policy_dominates(P, F, R)
    ->  true
    ;   front_dominator(P, Groups, R, F)
    ).
front_dominator(P, list(Front), R, F) :-
    member(F, Front),
    policy_dominates(P, F, R),
    !.
front_dominator(P, groups(Gs), R, F) :-
    arg(2, R, KR), arg(6, R, SR),
    member(G, Gs),
    (   other_record(G, KR, SR, F),               % another value, of another source
        may_dominate(P, F, R)
    ;   SR \== @(none),                          % of its own source: only a correction
        G = g(Own, _, _),                         % recorded later (the tie rule), so the
        get_assoc(SR, Own, own(N1, N2)),          % newest of another value, if any
        ( arg(2, N1, K1), K1 \== KR -> F = N1 ; N2 \== none, F = N2 ),
        policy_dominates(P, F, R)
    ),
    !.

replace_state([R0-St0|S0], R, St, S) :-
    (   R0 == R
    ->  S = [R0-St|S0]
    ;   S = [R0-St0|S1],
        replace_state(S0, R, St, S1)
    ).
