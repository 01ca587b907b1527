:- module(truthkeeper,
          [ tk_new/3,             % +M, +Policy, +Tiers
            tk_close/1,           % +M
            tk_add/3,             % +M, +Facts, -Result
            tk_retract/4,         % +M, +Id, +RA, -Result
            tk_heads/4,           % +M, +S, +A, -Heads
            tk_heads_at/6,        % +M, +S, +A, +KnownAt, +ValidAt, -Heads
            tk_links/4,           % +M, +Id, -Dominators, -Dominated
            tk_filter_ids/3,      % +M, +Ids, -Verdicts
            tk_phi/3,             % +M, +Candidates, -Drops
            tk_conflicts/2,       % +M, -Slots
            tk_add_rule/4,        % +M, +RuleId, +Text, -Result
            tk_beliefs/2,         % +M, -Beliefs
            tk_explain/3,         % +M, +Text, -Proof
            tk_what_if/4,         % +M, +Adds, +Retracts, -Changes
            tk_undo_facts/2,      % +M, +Ids
            tk_unretract/2,       % +M, +Id
            tk_drop_rule/2,       % +M, +RuleId
            tk_run_tests/2        % -Passed, -Failed
          ]).
:- use_module(store).
:- use_module(dominance).
:- use_module(phi).
:- use_module(tms).
:- use_module(library(lists), [member/2, subtract/3, sum_list/2]).
:- use_module(library(plunit), [run_tests/2]).
:- use_module(library(apply), [maplist/3, maplist/2, exclude/3]).

/** <module> truthkeeper: the entry points Python calls through janus

Goals called from Python are constant strings naming these predicates; all
data arrives as janus inputs. Strings from Python are turned into atoms here
(slots, ids, tiers, sources, string values); other values arrive tagged:
j-Json (JSON text, kept as a string) and b-0/1 (booleans, the atoms false and
true). A Python None arrives as @(none).
*/

%!  tk_new(+M, +Policy, +Tiers) is det.
tk_new(M, PolicyS, TierSs) :-
    atom_string(Policy, PolicyS),
    maplist([S, A]>>atom_string(A, S), TierSs, Tiers),
    new_memory(M, Policy, Tiers).

%!  tk_close(+M) is det.
tk_close(M) :-
    drop_rules(M),
    drop_memory(M).

value_in(X, X) :- atom(X), !.
value_in(X, V) :- string(X), !, atom_string(V, X).
value_in(X, X) :- number(X), !.
value_in(j-T, V) :- !, atom_string(A, T), atom_string(A, V).
value_in(b-B, V) :- !, ( B =:= 1 -> V = true ; V = false ).
value_in(X, _) :- throw(error(type_error(truthkeeper_value, X), _)).

opt_in(@(none), none) :- !.
opt_in(X, X) :- number(X), !.
opt_in(X, A) :- atom_string(A, X).

fact_in(-(IdS, SS, AS, V0, VF, VT0, RA, TierS, SrcS, Sup0),
        f(Id, S, A, V, VF, VT, RA, Tier, Src, Sup)) :-
    atom_string(Id, IdS), atom_string(S, SS), atom_string(A, AS),
    value_in(V0, V), opt_in(VT0, VT),
    atom_string(Tier, TierS), atom_string(Src, SrcS), opt_in(Sup0, Sup).

%!  tk_add(+M, +Facts, -Result) is det.
%
%   Add a batch atomically. Result is ok, or -(Kind, Id, Other) when the batch is
%   refused (nothing is changed): duplicate_id, unknown_fact, cross_slot,
%   lower_tier, cycle.
tk_add(M, Facts, Result) :-
    maplist(fact_in, Facts, Recs),
    catch(( transaction(add_recs(M, Recs)), Result = ok ),
          tk_reject(Result),
          true).

add_recs(M, Recs) :-
    forall(member(R, Recs), assert_rec(M, R)),
    forall(member(f(Id, _, _, _, _, _, _, _, _, Sup), Recs),
           check_rec_link(M, Id, Sup)),
    findall(S-A-Id, member(f(Id, S, A, _, _, _, _, _, _, _), Recs), Keyed0),
    msort(Keyed0, Keyed),
    slot_groups(Keyed, Groups),
    forall(member(S-A-Ids, Groups), update_slot(M, S, A, Ids)).

% slot_groups(+SortedSlotIdTriples, -Groups): S-A-[Id...] per slot
slot_groups([], []).
slot_groups([S-A-Id|T], [S-A-[Id|Ids]|Gs]) :-
    same_slot(T, S, A, Ids, Rest),
    slot_groups(Rest, Gs).

same_slot([S0-A0-Id|T], S, A, [Id|Ids], Rest) :-
    S0 == S, A0 == A, !,
    same_slot(T, S, A, Ids, Rest).
same_slot(Rest, _, _, [], Rest).

% A fact alone in a slot that had nothing is its head and its value holds: the common case
% of a bulk load, done without the general dominance pass.
update_slot(M, S, A, [Id]) :-
    \+ sup(M, Id, _),
    \+ ( fact(M, G, S, A, _, _, _, _, _, _), G \== Id ),
    !,
    fact(M, Id, _, _, V, _, _, _, _, _),
    assertz(head(M, S, A, Id)),
    assertz(holds(M, S, A, V)).
% A small slot without explicit links: recompute its heads from the policy records, each
% fact looked up once (cheaper than one incremental update per new fact).
update_slot(M, S, A, _) :-
    slot_live(M, S, A, Live),
    length(Live, N), N =< 32,
    \+ ( member(X, Live), ( sup(M, X, _) ; sup(M, _, X) ) ),
    !,
    mem_policy(M, P),
    maplist(record(M), Live, Recs),
    findall(H, ( member(R, Recs), R = r(H, _, _, _, _),
                 \+ ( member(R2, Recs), R2 \== R, policy_dominates(P, R2, R) ) ), Heads),
    retractall(head(M, S, A, _)),
    forall(member(H, Heads), assertz(head(M, S, A, H))),
    refresh_holds(M, S, A).
% Large slots and slots with explicit links: one linear incremental update per new fact.
update_slot(M, S, A, Ids) :-
    forall(member(Id, Ids), insert_update(M, Id)),
    refresh_holds(M, S, A).

assert_rec(M, f(Id, S, A, V, VF, VT, RA, Tier, Src, Sup)) :-
    (   fact(M, Id, _, _, _, _, _, _, _, _)
    ->  throw(tk_reject(-(duplicate_id, Id, '')))
    ;   true
    ),
    assertz(fact(M, Id, S, A, V, VF, VT, RA, Tier, Src)),
    (   Sup == none
    ->  true
    ;   assertz(sup(M, Id, Sup))
    ).

check_rec_link(_, _, none) :- !.
check_rec_link(M, Id, Sup) :-
    check_link(M, Id, Sup, Problem),
    (   Problem == ok
    ->  true
    ;   throw(tk_reject(-(Problem, Id, Sup)))
    ).

%!  tk_retract(+M, +Id, +RA, -Result) is det.
%
%   Result is ok, unknown_fact or already_retracted.
tk_retract(M, IdS, RA, Result) :-
    atom_string(Id, IdS),
    (   \+ fact(M, Id, _, _, _, _, _, _, _, _)
    ->  Result = unknown_fact
    ;   retracted(M, Id, _)
    ->  Result = already_retracted
    ;   assertz(retracted(M, Id, RA)),
        fact(M, Id, S, A, _, _, _, _, _, _),
        recompute_slot(M, S, A),
        Result = ok
    ).

%!  tk_undo_facts(+M, +Ids) is det.
%
%   Remove facts whose journal commit failed (they were never acknowledged)
%   and recompute the heads of their slots.
tk_undo_facts(M, IdSs) :-
    maplist([S, A]>>atom_string(A, S), IdSs, Ids),
    findall(S-A, ( member(Id, Ids), fact(M, Id, S, A, _, _, _, _, _, _) ), Slots0),
    sort(Slots0, Slots),
    forall(member(Id, Ids),
           ( retractall(fact(M, Id, _, _, _, _, _, _, _, _)),
             retractall(sup(M, Id, _)),
             retractall(head(M, _, _, Id)) )),
    forall(member(S-A, Slots), recompute_slot(M, S, A)).

%!  tk_unretract(+M, +Id) is det.
%
%   Undo a retraction whose journal commit failed.
tk_unretract(M, IdS) :-
    atom_string(Id, IdS),
    retractall(retracted(M, Id, _)),
    (   fact(M, Id, S, A, _, _, _, _, _, _)
    ->  recompute_slot(M, S, A)
    ;   true
    ).

%!  tk_drop_rule(+M, +RuleId) is det.
%
%   Undo a rule whose journal commit failed.
tk_drop_rule(M, RuleIdS) :-
    atom_string(RuleId, RuleIdS),
    drop_rule(M, RuleId).

%!  tk_heads(+M, +S, +A, -Heads) is det.
tk_heads(M, SS, AS, Heads) :-
    atom_string(S, SS), atom_string(A, AS),
    slot_heads(M, S, A, Heads).

%!  tk_heads_at(+M, +S, +A, +KnownAt, +ValidAt, -Heads) is det.
tk_heads_at(M, SS, AS, K0, V0, Heads) :-
    atom_string(S, SS), atom_string(A, AS),
    opt_in(K0, K), opt_in(V0, V),
    heads_at(M, S, A, K, V, Heads).

%!  tk_links(+M, +Id, -Dominators, -Dominated) is det.
tk_links(M, IdS, Dominators, Dominated) :-
    atom_string(Id, IdS),
    dominators(M, Id, Dominators),
    dominated(M, Id, Dominated).

%!  tk_filter_ids(+M, +Ids, -Verdicts) is det.
%
%   For each id -(Id, Status, By): head, retracted, or dominated by By (a live fact
%   dominating it, a head when one does).
tk_filter_ids(M, IdSs, Verdicts) :-
    maplist(verdict(M), IdSs, Verdicts).

verdict(M, IdS, -(Id, Status, By)) :-
    atom_string(Id, IdS),
    fact(M, Id, S, A, _, _, _, _, _, _),
    (   retracted(M, Id, _)
    ->  Status = retracted, By = ''
    ;   head(M, S, A, Id)
    ->  Status = head, By = ''
    ;   (   head(M, S, A, H), dominates(M, H, Id)
        ->  By = H
        ;   dominators(M, Id, [By|_])
        ),
        Status = dominated
    ).

%!  tk_phi(+M, +Candidates, -Drops) is det.
%
%   Candidates are Index-SlotKey-Value-Tau-TierName tuples; Drops Index-By pairs.
tk_phi(M, Cands0, Drops) :-
    mem_policy(M, Policy),
    maplist(cand_in(M), Cands0, Cands),
    phi_filter(Policy, Cands, Drops).

cand_in(M, -(I, K, V0, T, TierS), c(I, K, V, T, R)) :-
    value_in(V0, V),
    atom_string(Tier, TierS),
    tier_rank(M, Tier, R).

%!  tk_conflicts(+M, -Slots) is det.
tk_conflicts(M, Slots) :-
    findall(S-A, conflict(M, S, A), Slots0),
    sort(Slots0, Slots).

%!  tk_add_rule(+M, +RuleId, +Text, -Result) is det.
tk_add_rule(M, RuleIdS, Text, Result) :-
    atom_string(RuleId, RuleIdS),
    add_rule(M, RuleId, Text, R0),
    (   R0 = ok(_)
    ->  Result = ok-''
    ;   R0 = error(Kind, Msg),
        Result = Kind-Msg
    ).

%!  tk_beliefs(+M, -Beliefs) is det.
tk_beliefs(M, Beliefs) :-
    beliefs(M, Beliefs).

%!  tk_explain(+M, +Text, -Proof) is det.
tk_explain(M, Text, Proof) :-
    explain_belief(M, Text, Proof).

%!  tk_what_if(+M, +Adds, +Retracts, -Changes) is det.
%
%   Evaluate adding the facts Adds and retracting the ids Retracts, inside a
%   snapshot that is always discarded. Changes is error-Problem, or
%   -(ok, SlotChanges, NewBeliefs, LostBeliefs) with SlotChanges a list of
%   -(S, A, HeadsBefore, HeadsAfter) for each touched slot whose heads change.
tk_what_if(M, Adds, RetractSs, Changes) :-
    maplist(fact_in, Adds, Recs),
    maplist([S, A]>>atom_string(A, S), RetractSs, Retracts),
    findall(S-A, ( member(f(_, S, A, _, _, _, _, _, _, _), Recs)
                 ; member(Id, Retracts), fact(M, Id, S, A, _, _, _, _, _, _) ), Slots0),
    sort(Slots0, Slots),
    findall(S-A-Hs, ( member(S-A, Slots), slot_heads(M, S, A, Hs) ), Before),
    beliefs(M, B0),
    snapshot(what_if_in(M, Recs, Retracts, Slots, Before, B0, Changes)).

what_if_in(M, Recs, Retracts, Slots, Before, B0, Changes) :-
    catch(( add_recs(M, Recs), R = ok ), tk_reject(P), R = P),
    (   R \== ok
    ->  Changes = error-R
    ;   forall(member(Id, Retracts),
               ( fact(M, Id, S, A, _, _, _, _, _, _)
               -> assertz(retracted(M, Id, 0)), recompute_slot(M, S, A)
               ;  true )),
        findall(-(S, A, Hs0, Hs1), ( member(S-A, Slots), member(S-A-Hs0, Before),
                               slot_heads(M, S, A, Hs1),
                               msort(Hs0, X), msort(Hs1, Y), X \== Y ), SlotChanges),
        beliefs(M, B1),
        subtract(B1, B0, Gained),
        subtract(B0, B1, Lost),
        Changes = -(ok, SlotChanges, Gained, Lost)
    ).

%!  tk_run_tests(-Passed, -Failed) is det.
%
%   Load and run every plunit suite shipped in tests/; counts of passed and
%   failed tests.
tk_run_tests(Passed, Failed) :-
    module_property(truthkeeper, file(File)),
    file_directory_name(File, Dir),
    directory_file_path(Dir, 'tests/*.plt', Pattern),
    expand_file_name(Pattern, Files),
    forall(member(F, Files), load_files(F, [if(changed)])),
    run_tests(all, [summary(Summary)]),
    Passed = Summary.passed,
    Bad = [Summary.failed, Summary.timeout, Summary.blocked],
    sum_list(Bad, Failed).
