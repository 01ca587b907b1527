:- module(truthkeeper,
          [ tk_new/3,             % +M, +Policy, +Tiers
            tk_close/1,           % +M
            tk_policies/1,        % -Policies
            tk_register_policy/3, % +Name, +Text, +MetaKeys
            tk_policy_meta_keys/2, % +Policy, -Keys
            tk_add/4,             % +M, +Facts, +Clock, +Drawn
            tk_commuting/5,       % +M, +SubjectKeys, +Sources, +Tiers, -Commutes
            tk_retract/4,         % +M, +Id, +RA, +Reason
            tk_undo_facts/2,      % +M, +Ids
            tk_erase/6,           % +M, +Id, +RA, +Payload, +S, +A
            tk_forget/1,          % +M (after erasures)
            tk_advance/3,         % +M, +Now, -Next
            tk_end/4,             % +M, +Id, +ValidTo, +RA (none: undo)
            tk_ended_rows/5,      % +M, +Candidates, +Slots, -Indexes, -Ends
            tk_declare/3,         % +M, +Attribute, +Cardinality
            tk_resolve_union/7,   % +M, +Ss, +A, +KnownAt, +ValidAt, -Status, -RowGroups
            tk_count_scope/3,     % +M, +Scope, -Count
            tk_dominance_pairs/3, % +M, +Ids, -Pairs
            tk_protect/2,         % +M, +Tiers
            tk_top_tier/3,        % +M, +Protected, -Tier
            tk_guarded_tiers/2,   % +M, -Tiers
            tk_tiers/2,           % +M, -Tiers
            tk_attribute_used/3,  % +M, +Attribute, -Used
            tk_slots/3,           % +M, +Subject, -Slots
            tk_unload_slots/3,    % +M, +Slots, -Unloaded
            tk_quote/2,           % +Atom, -Text
            tk_unretract/2,       % +M, +Id
            tk_bind_source/5,     % +M, +Scope, +Source, +Tier, +Restore
            tk_source_tier/4, tk_sources/3,  % +M, +Scope, +Source, -Tier; +M, +Scope, -STs
            tk_use_nonce/3, tk_unuse_nonce/2,  % +M, +Nonce(, +Owner)
            tk_resolve/5,         % +M, +S, +A, -Status, -Groups
            tk_resolve_at/7,      % +M, +S, +A, +KnownAt, +ValidAt, -Status, -Groups
            tk_resolve_rows/5,    % +M, +S, +A, -Status, -RowGroups
            tk_resolve_rows_at/7, % +M, +S, +A, +KnownAt, +ValidAt, -Status, -RowGroups
            tk_facts/3,           % +M, +Ids, -Rows
            tk_known_ids/3, tk_slot_facts/4,  % +M, +Ids, -Known; +M, +S, +A, -Rows
            tk_all_facts/2,       % +M, -Rows
            tk_count/2,           % +M, -Count
            tk_links/4,           % +M, +Id, -Dominators, -Dominated
            tk_filter_ids/5,      % +M, +Scope, +Ids, -Verdicts, -ByRows
            tk_phi_store/5,       % +M, +Cands, +Slots, -Drops, -Disputes
            tk_order_pairs/3,     % +M, +Candidates, -Pairs
            tk_conflicts/2,       % +M, -Slots
            tk_same_value/3,      % +Key1, +Key2, -Same
            tk_match_heads/6,     % +M, +Ss, +A, +Key, -Right, -Wrong
            tk_claims/3,          % +M, +GoldIds, -Items
            tk_add_rule/5,        % +M, +Scope, +RuleId, +Text, -UndefinedCalls
            tk_load_rule/4,       % +M, +Scope, +RuleId, +Text
            tk_drop_rule/2,       % +M, +RuleId
            tk_rules/3, tk_beliefs/3,  % +M, +Scope, -Rules / -Beliefs
            tk_explain/4,         % +M, +Scope, +Text, -Proof
            tk_what_if/6,         % +M, +Scope, +Now, +Adds, +Retracts, -Changes
            tk_error/3,           % +Caught, +Goal, -Error
            tk_run_tests/3        % +Dir, -Passed, -Failed
          ]).
:- use_module(store, [bind_source/4, use_nonce/3, unuse_nonce/2, set_now/2, blank_fact/5,
                      view_source_tier/4, view_sources/3, union_status/6, declare_attr/3,
                      protect_tiers/2, attribute_used/2, known_ids/3, slots/3, unload_slots/3,
                      fact/10, payload/3, sup/3, retracted/4, source_tier/5, tier_rank/3,
                      mem_policy/2, new_memory/3, drop_memory/1, fact_count/2, record/3,
                      store_now/2, many_attr/2, protected_tier/2, guarded_tiers/2, top_tier/3,
                      tiers_by_rank/2, count_scope/3, set_status/6, commuting/4]).
:- use_module(policies, [policy/1, may_dominate/3, register_policy/3, policy_meta_keys/2]).
:- use_module(dominance, [dominates/3, add_facts/3, retract_fact/4, undo_facts/2, unretract/2,
                          slot_heads/4, heads_at/6, ended/3, head/4, conflict/3]).
:- use_module(union, [heads_union/6]), use_module(context, [ended_claims/4]).
:- use_module(clock, [advance/3, end_fact/4]).
:- use_module(phi, [phi_store/5, dominance_rule/4, live_candidates/4, view_verdicts/4,
                    not_current/4, slot_dominated/4, timed_dominated/2, slot_dominated_in/4,
                    order_pairs/3, dominators/3, dominated/3, dominance_pairs/3]).
:- use_module(claims, [claims/3, match_heads/6]).
:- use_module(resolution, [resolution/4]).
:- use_module(errors, [error_data/2]).
:- use_module(fast, [janus_out/2]).     % and bridge.call's table of goals
:- use_module(tms, [add_rule/4, load_rule/4, scope_rules/3, beliefs/3, explain_belief/4,
                    drop_rules/1, drop_rule/2, what_if/6, undefined_calls/3]).
:- use_module(forget, [forget/1, erase_retract/3]).
:- use_module(reclaim, [reclaim_after/0]).
:- use_module(library(lists), [member/2, subtract/3, sum_list/2, nth0/3, last/2, append/3]).
:- use_module(library(apply), [maplist/2, maplist/3, foldl/4, include/3, partition/4]).
:- use_module(library(pairs), [pairs_values/2, pairs_keys_values/3]).
:- use_module(library(error), [type_error/2, existence_error/2, must_be/2]).

/** <module> truthkeeper: marshalling between janus and the modules

Goals called from Python are constant strings naming these predicates; all
data arrives as janus inputs. This module only converts: strings from Python
become atoms (slots, ids, tiers, sources, string value keys); other value keys
arrive tagged and become typed Prolog terms (key_in/2):

  | Python value_key        | Prolog key      |
  | str (normalised)        | atom            |
  | int, float              | number          |
  | ("b", 0 or 1)           | @(false), @(true) |
  | ("n", 0)                | @(none)         |
  | ("j", CanonicalJson)    | json(Atom)      |

A Python None input arrives as @(none) (optional times, ids). Errors are ISO
error terms raised by the modules; the bridge turns a caught one into data
with tk_error/2 and maps it to the error family in one table.
*/

:- det((tk_new/3, tk_close/1, tk_policies/1, tk_register_policy/3, tk_policy_meta_keys/2,
        tk_add/4, tk_commuting/5, tk_resolve_rows/5, tk_advance/3, tk_end/4, tk_ended_rows/5, tk_declare/3,
        tk_resolve_union/7, tk_count_scope/3, tk_dominance_pairs/3, tk_protect/2, tk_top_tier/3,
        tk_guarded_tiers/2, tk_tiers/2, tk_attribute_used/3, tk_resolve_rows_at/7, tk_retract/4,
        tk_undo_facts/2, tk_erase/6, tk_slots/3, tk_quote/2, tk_unretract/2, tk_bind_source/5,
        tk_source_tier/4, tk_sources/3, tk_use_nonce/3, tk_unuse_nonce/2, tk_resolve/5,
        tk_resolve_at/7, tk_facts/3, tk_slot_facts/4, tk_all_facts/2, tk_count/2, tk_links/4,
        tk_filter_ids/5, tk_phi_store/5, tk_order_pairs/3, tk_conflicts/2,
        tk_same_value/3, tk_match_heads/6, tk_claims/3, tk_add_rule/5, tk_load_rule/4,
        tk_drop_rule/2, tk_rules/3, tk_beliefs/3, tk_explain/4, tk_what_if/6, tk_error/3)).

% ---------------------------------------------------------------- conversion

atom_in(X, A) :- atom(X), !, A = X.
atom_in(X, A) :- string(X), !, atom_string(A, X).
atom_in(X, _) :- type_error(text, X).

key_in(X, K) :- string(X), !, atom_string(K, X).
key_in(X, X) :- number(X), !.
key_in(X, X) :- atom(X), !.
key_in(-(T, B), K) :- atom_in(T, Tag), tagged(Tag, B, K), !.
key_in(X, _) :- type_error(truthkeeper_value_key, X).

tagged(b, 1, @(true)).
tagged(b, 0, @(false)).
tagged(n, _, @(none)).
tagged(j, T, json(A)) :- atom_in(T, A).
tagged(m, -(V0, P), m(V, P)) :- key_in(V0, V), ( P == 1 ; P == 0 ), !.

% Optional times: a number, or none when absent.
opt_in(@(none), none) :- !.
opt_in(X, X) :- number(X), !.
opt_in(X, _) :- type_error(optional_time, X).

% Optional names (supersedes, nonce, source): an atom, or @(none) when absent, so that a
% name spelled "none" stays a name.
opt_name_in(@(none), @(none)) :- !.
opt_name_in(X, A) :- atom_in(X, A).

opt_out(none, @(none)) :- !.
opt_out(X, X).

fact_in(-(Id0, S0, A0, K0, VF, VT0, RA, Tier0, Src0, Sup0, N0, Json0, Meta0),
        f(Id, S, A, K, VF, VT, RA, Tier, Src, Sup, N, Json, Meta)) :-
    maplist(meta_in, Meta0, Meta),
    atom_in(Id0, Id), atom_in(S0, S), atom_in(A0, A), key_in(K0, K),
    must_be(integer, VF), opt_in(VT0, VT), must_be(integer, RA),
    atom_in(Tier0, Tier), atom_in(Src0, Src), opt_name_in(Sup0, Sup), opt_name_in(N0, N),
    string_in(Json0, Json).

string_in(X, X) :- string(X), !.
string_in(X, S) :- atom(X), !, atom_string(X, S).
string_in(X, _) :- type_error(text, X).

meta_in(-(K0, V0), K-V) :- atom_in(K0, K), key_in(V0, V).

% fact_out(+M, +Dom, +Id, -Row): -(Id, S, A, VF, VT, RA, Tier, Src, Sup, Json, Status)
fact_out(M, Dom, Id, -(Id, S, A, VF, VT, RA, Tier, Src, Sup, Json, Status)) :-
    fact(M, Id, S, A, _, VF, VT0, RA, Tier, Src),
    payload(M, Id, Json),
    opt_out(VT0, VT),
    ( sup(M, Id, Sup) -> true ; Sup = @(none) ),
    (   Dom = status(Status)                       % known (an ended fact phi names)
    ->  true
    ;   retracted(M, Id, RRA, Reason)
    ->  Status = -(retracted, RRA, Reason)
    ;   head(M, S, A, Id)
    ->  Status = head
    ;   not_current(M, Id, Why, Dom)
    ->  Status = Why
    ;   Status = superseded
    ).

% ---------------------------------------------------------------- lifecycle

%!  tk_new(+M, +Policy, +Tiers) is det.
tk_new(M, PolicyS, TierSs) :-
    atom_in(PolicyS, Policy), maplist(atom_in, TierSs, Tiers), new_memory(M, Policy, Tiers).

%!  tk_close(+M) is det.
tk_close(M) :- drop_rules(M), drop_memory(M).

%!  tk_policies(-Policies) is det.
tk_policies(Ps) :- findall(P, policy(P), Ps).

%!  tk_register_policy(+Name, +Text, +MetaKeys) is det.
tk_register_policy(Name0, Text, Keys0) :-
    atom_in(Name0, Name), string_in(Text, T), maplist(atom_in, Keys0, Keys),
    register_policy(Name, T, Keys).

%!  tk_policy_meta_keys(+Policy, -Keys) is det.
tk_policy_meta_keys(P0, Keys) :-
    atom_in(P0, P), ( policy_meta_keys(P, Keys) -> true ; Keys = [] ).

% ---------------------------------------------------------------- writes

%!  tk_add(+M, +Facts, +Clock, +Drawn) is det.
%   Add a batch (Drawn: add_facts/3). Clock (or @(none)) first moves the memory's
%   clock there: the caller knows that no fact begins or ends between the clock and
%   Clock (else tk_advance/3), so no slot's heads change by the move.
tk_add(M, Rows, Clock0, @(Drawn)) :-
    maplist(fact_in, Rows, Recs),
    opt_in(Clock0, Clock), must_be(boolean, Drawn),
    transaction(( ( Clock == none -> true ; set_now(M, Clock) ),  % refused: not moved
                  add_facts(M, Recs, Drawn) )),
    reclaim_after.

%!  tk_commuting(+M, +SubjectKeys, +Sources, +Tiers, -Commutes) is det (commuting/4).
tk_commuting(M, Ss0, Rs0, Ts0, C) :-
    maplist(atom_in, Ss0, Ss), maplist(atom_in, Rs0, Rs), maplist(atom_in, Ts0, Ts),
    ( commuting(M, Ss, Rs, Ts) -> C = @(true) ; C = @(false) ).

%!  tk_retract(+M, +Id, +RA, +Reason) is det.
tk_retract(M, Id0, RA, Reason0) :-
    atom_in(Id0, Id), atom_in(Reason0, Reason),
    retract_fact(M, Id, RA, Reason).

%!  tk_erase(+M, +Id, +RA, +Payload, +S, +A) is det.
%   Erase a fact's content for good: retract it (reason erased) unless it is
%   retracted already, replace its payload by Payload and its value key and
%   policy meta by '$erased', and move it to the slot S, A (its placeholder's,
%   named by a digest of its own). Its times, tier and source stay.
%   @error existence_error(fact, Id) for an id the memory does not hold.
tk_erase(M, Id0, RA, Payload0, S0, A0) :-
    atom_in(Id0, Id), string_in(Payload0, Payload), atom_in(S0, S), atom_in(A0, A),
    ( retracted(M, Id, _, _) -> true ; erase_retract(M, Id, RA) ),
    blank_fact(M, Id, Payload, S, A).

%!  tk_forget(+M) is det: after erasures, forget:forget/1.
tk_forget(M) :- forget(M).

%!  tk_advance(+M, +Now, -Next) is det.
%
%   Move the memory's clock to Now (clock:advance/3); Next is when it must be
%   advanced again, or @(none).
tk_advance(M, Now, Next) :-
    must_be(integer, Now),
    advance(M, Now, Next0),
    opt_out(Next0, Next).

%!  tk_end(+M, +Id, +ValidTo) is det.
tk_end(M, Id0, VT0, RA0) :-
    atom_in(Id0, Id), opt_in(VT0, VT), opt_in(RA0, RA),
    end_fact(M, Id, VT, RA).

%!  tk_slots(+M, +Subject, -Slots) is det.
%   store:slots/3 of the subject key Subject, or of every subject with @(none).
tk_slots(M, S0, Slots) :-
    ( S0 == @(none) -> S = _ ; atom_in(S0, S) ),
    slots(M, S, Slots).

%!  tk_quote(+Atom, -Text) is det.
%
%   How an atom is written in a belief's text (quoted when needed).
tk_quote(X0, T) :-
    atom_in(X0, X),
    format(string(T), '~q', [X]).

%!  tk_undo_facts(+M, +Ids) is det.
tk_undo_facts(M, Ids0) :-
    maplist(atom_in, Ids0, Ids),
    undo_facts(M, Ids).

%!  tk_unretract(+M, +Id) is det.
tk_unretract(M, Id0) :-
    atom_in(Id0, Id),
    unretract(M, Id).

%!  tk_bind_source(+M, +Scope, +Source, +Tier, +How) is det.
%
%   Bind a source named by an outcome recorded in Scope ("" shared) to its tier
%   (store:bind_source/4). How: "$outcome"; "$restore", a binding the journal made,
%   recorded unchecked (a lazy memory loading it); "$check", checked only.
tk_bind_source(M, Sc0, Src0, Tier0, How0) :-
    atom_in(Sc0, Sc), atom_in(Src0, Src), atom_in(Tier0, Tier), atom_in(How0, How),
    must_be(oneof(['$outcome', '$restore', '$check']), How),
    bind_source(M, Sc-Src, Tier, How).

%!  tk_source_tier(+M, +Scope, +Source, -Tier) is det.
%
%   The tier a source is bound to in Scope's view ("" the shared layer): the
%   scope's own binding, else the shared one, or @(none).
tk_source_tier(M, Sc0, Src0, Tier) :-
    atom_in(Sc0, Sc), atom_in(Src0, Src),
    ( view_source_tier(M, Sc, Src, T) -> Tier = T ; Tier = @(none) ).

%!  tk_sources(+M, +Scope, -SourceTiers) is det.
%
%   The sources of the facts Scope's view sees ('' the shared layer's; a scope's and
%   the shared layer's), each with its tier, sorted.
tk_sources(M, Sc0, Pairs) :-
    atom_in(Sc0, Sc),
    view_sources(M, Sc, Pairs).

%!  tk_use_nonce(+M, +Nonce, +Owner) is det.
tk_use_nonce(M, N0, O0) :-
    atom_in(N0, N), atom_in(O0, O),
    use_nonce(M, N, O).

%!  tk_unuse_nonce(+M, +Nonce) is det.
%
%   Take back a nonce whose write failed.
tk_unuse_nonce(M, N0) :-
    atom_in(N0, N),
    unuse_nonce(M, N).

% ---------------------------------------------------------------- reads

%!  tk_resolve(+M, +S, +A, -Status, -Groups) is det.
tk_resolve(M, S0, A0, Status, Groups) :-
    atom_in(S0, S), atom_in(A0, A),
    slot_heads(M, S, A, Heads),
    resolution(M, Heads, Status0, Groups),
    set_status(M, S, A, none, Status0, Status).

%!  tk_resolve_at(+M, +S, +A, +KnownAt, +ValidAt, -Status, -Groups) is det.
tk_resolve_at(M, S0, A0, K0, V0, Status, Groups) :-
    atom_in(S0, S), atom_in(A0, A),
    opt_in(K0, K), opt_in(V0, V),
    heads_at(M, S, A, K, V, Heads),
    resolution(M, Heads, Status0, Groups),
    set_status(M, S, A, K, Status0, Status).

%!  tk_resolve_union(+M, +Ss, +A, +KnownAt, +ValidAt, -Status, -RowGroups) is det.
%
%   tk_resolve_rows_at/7 over the union of the slots Ss (a scope's view: its own
%   slot and the shared layer's).
tk_resolve_union(M, Ss0, A0, K0, V0, Status, RowGroups) :-
    maplist(atom_in, Ss0, Ss), atom_in(A0, A), opt_in(K0, K), opt_in(V0, V),
    heads_union(M, Ss, A, K, V, Heads),
    resolution(M, Heads, Status0, Groups),
    union_status(M, Ss, A, K, Status0, Status),
    maplist(maplist(fact_row(M)), Groups, RowGroups).

%!  tk_dominance_pairs(+M, +Ids, -Pairs) is det.
%
%   The F-G pairs among the live facts Ids where F dominates G (a scope's view draws
%   the supersessions across its two layers).
tk_dominance_pairs(M, Ids0, Pairs) :-
    maplist(atom_in, Ids0, Ids),
    dominance_pairs(M, Ids, Pairs).

%!  tk_count_scope(+M, +Scope, -Count) is det.
%
%   The facts a view sees: the shared layer's (subjects without a scope), and
%   those of Scope (subject keys Scope + US) unless Scope is @(none).
tk_count_scope(M, Scope0, N) :-
    ( Scope0 == @(none) -> Scope = none ; atom_in(Scope0, Scope) ),
    count_scope(M, Scope, N).

%!  tk_declare(+M, +Attribute, +Cardinality) is det.
%
%   Declare an attribute's cardinality (one or many) in memory M; the memory
%   refuses a change while the attribute holds facts (tk_attribute_used/3).
tk_declare(M, A0, C0) :-
    atom_in(A0, A), atom_in(C0, C),
    declare_attr(M, A, C).

%!  tk_protect(+M, +Tiers) is det.
%
%   The tiers declared protected (and so every tier above them: tk_guarded_tiers/2).
tk_protect(M, Ts0) :-
    maplist(atom_in, Ts0, Ts),
    protect_tiers(M, Ts).

%!  tk_tiers(+M, -Tiers) is det.   store:tiers_by_rank/2, most authoritative first.
tk_tiers(M, Tiers) :- tiers_by_rank(M, Tiers).

%!  tk_top_tier(+M, +Protected, -Tier) is det.
%   store:top_tier/3: the most authoritative guarded (true) or other (false) tier.
tk_top_tier(M, P, Tier) :- top_tier(M, P, Tier).

%!  tk_guarded_tiers(+M, -Tiers) is det.
%   The tiers whose writes need a signature (store:guarded_tier/2), sorted.
tk_guarded_tiers(M, Ts) :- guarded_tiers(M, Ts).

%!  tk_attribute_used(+M, +Attribute, -Used) is det.
tk_attribute_used(M, A0, Used) :-
    atom_in(A0, A),
    ( attribute_used(M, A) -> Used = @(true) ; Used = @(false) ).

%!  tk_resolve_rows(+M, +S, +A, -Status, -RowGroups) is det.
%
%   tk_resolve/5 with each head's fact row (as tk_facts/3 gives it) in place of its id:
%   the current value of a slot in one call from Python.
tk_resolve_rows(M, S, A, Status, RowGroups) :-
    tk_resolve(M, S, A, Status, Groups),
    maplist(maplist(fact_row(M)), Groups, RowGroups).

%!  tk_resolve_rows_at(+M, +S, +A, +KnownAt, +ValidAt, -Status, -RowGroups) is det.
tk_resolve_rows_at(M, S, A, K, V, Status, RowGroups) :-
    tk_resolve_at(M, S, A, K, V, Status, Groups),
    maplist(maplist(fact_row(M)), Groups, RowGroups).

%!  tk_facts(+M, +Ids, -Rows) is det.
%
%   @error existence_error(fact, Id) for an id the memory does not hold.
tk_facts(M, Ids0, Rows) :-
    maplist(atom_in, Ids0, Ids),
    maplist(fact_row(M), Ids, Rows).

fact_row(M, Id, Row) :- fact_row(M, none, Id, Row).
fact_row(M, Dom, Id, Row) :- ( fact_out(M, Dom, Id, Row0) -> Row = Row0 ; existence_error(fact, Id) ).

%!  tk_known_ids(+M, +Ids, -Known) is det: the ids among Ids of facts the store holds.
tk_known_ids(M, Ids0, Known) :-
    maplist(atom_in, Ids0, Ids),
    known_ids(M, Ids, Known).

%!  tk_slot_facts(+M, +S, +A, -Rows) is det.
tk_slot_facts(M, S0, A0, Rows) :-
    atom_in(S0, S), atom_in(A0, A), slot_dominated(M, S, A, Dom),
    findall(Row, ( fact(M, Id, S, A, _, _, _, _, _, _), fact_out(M, Dom, Id, Row) ), Rows).

%!  tk_all_facts(+M, -Rows) is det.
tk_all_facts(M, Rows) :-
    timed_dominated(M, Doms),
    findall(Row, ( fact(M, Id, S, A, _, _, _, _, _, _), slot_dominated_in(Doms, S, A, Dom),
                   fact_out(M, Dom, Id, Row) ), Rows).

%!  tk_count(+M, -Count) is det.
tk_count(M, N) :- fact_count(M, N).

%!  tk_links(+M, +Id, -Dominators, -Dominated) is det.
%   Id-Rule pairs: the live facts that dominate Id, and those it dominates, each with
%   the rule (phi:dominance_rule/4).
tk_links(M, Id0, Over, Under) :-
    atom_in(Id0, Id), dominators(M, Id, Ds), dominated(M, Id, Gs),
    findall(D-R, ( member(D, Ds), dominance_rule(M, D, Id, R) ), Over),
    findall(G-R, ( member(G, Gs), dominance_rule(M, Id, G, R) ), Under).

%!  tk_filter_ids(+M, +Scope, +Ids, -Verdicts, -ByRows) is det.
%
%   For each id -(S, A, Status, By, Rule): its slot and phi:view_verdicts/4 in Scope's
%   view ('' none), By the id of the fact that dominates it ('' if none); ByRows the
%   tk_facts/3 rows of those, once.
%   @error existence_error(fact, Id) for an id the memory does not hold.
tk_filter_ids(M, Sc0, Ids0, Verdicts, ByRows) :-
    atom_in(Sc0, Sc), maplist(atom_in, Ids0, Ids),
    view_verdicts(M, Sc, Ids, Verdicts),
    findall(By, ( member(-(_, _, _, By, _), Verdicts), By \== '' ), Bys0),
    sort(Bys0, Bys), maplist(fact_row(M), Bys, ByRows).

% cand_in(+M, +Row, -Cand): Row is -(Index, SlotKey, Key, Tau, Tier, RA, Source, ValidTo);
% Cand is ValidTo-c(Index, SlotKey, Record), ValidTo none when open.
cand_in(M, -(I, K0, V0, T, Tier0, RA0, Src0, VT0), VT-c(I, K, r(I, V, T, RA, R, Src, []))) :-
    atom_in(K0, K), key_in(V0, V), atom_in(Tier0, Tier),
    opt_in(RA0, RA), opt_name_in(Src0, Src), opt_in(VT0, VT),
    once(tier_rank(M, Tier, R)).

% slot_in(+Row, -Slot): -(SlotKey, S, A) as atoms.
slot_in(-(K0, S0, A0), -(K, S, A)) :-
    atom_in(K0, K), atom_in(S0, S), atom_in(A0, A).

%!  tk_unload_slots(+M, +Slots, -Unloaded) is det (store:unload_slots/3).
tk_unload_slots(M, Ss0, Us) :- maplist(slot_in, Ss0, Ss), unload_slots(M, Ss, Us).

%!  tk_ended_rows(+M, +Candidates, +Slots, -Indexes, -Ends) is det.
%
%   The candidates whose valid_to passed at the clock; Ends: context:ended_claims/4.
tk_ended_rows(M, Rows, Slots, Is, Ends) :-
    maplist(cand_in(M), Rows, Timed), live_candidates(M, Timed, Live, Ended),
    pairs_keys_values(Ended, Is, _), maplist(slot_in, Slots, Ss), ended_claims(M, Ss, Live, Ends).

%!  tk_phi_store(+M, +Candidates, +Slots, -Drops, -Disputes) is det.
%
%   Phi_T over the candidates and the memory's heads of their slots (Slots are
%   -(SlotKey, S, A)): a candidate that a head dominates is dropped, the head
%   given as -(head, Row), its tk_facts/3 row (one call answers the filter); never a
%   head. Disputes: -(Indexes, HeadRows) (phi:phi_store/5).
tk_phi_store(M, Rows, Slots0, Drops, Disputes) :-
    maplist(cand_in(M), Rows, Timed),
    maplist(slot_in, Slots0, Slots),
    phi_store(M, Timed, Slots, Drops0, Disputes0),
    maplist(head_row(M), Drops0, Drops),
    maplist(dispute_row(M), Disputes0, Disputes).

head_row(M, I-J, I-J1) :-                      % J: an index, ended, -(head | ended, Id)
    (   J = -(Why, H)                           % an ended fact's status needs no sweep
    ->  ( Why == ended -> fact_row(M, status(ended), H, Row) ; fact_row(M, H, Row) ),
        J1 = -(Why, Row)
    ;   J1 = J
    ).

dispute_row(M, d(Is, Hs), -(Is, Rows)) :- maplist(fact_row(M), Hs, Rows).

%!  tk_order_pairs(+M, +Candidates, -Pairs) is det.
%
%   The (dominated, dominator) index pairs of one slot that the policy's order
%   allows (ignoring values), each dominated index with its possible
%   dominators newest first: the only pairs a kappa needs to judge.
tk_order_pairs(M, Rows, Pairs) :-
    maplist(cand_in(M), Rows, Timed),
    pairs_values(Timed, Cands),
    order_pairs(M, Cands, Pairs0), janus_out(Pairs0, Pairs).

%!  tk_conflicts(+M, -Slots) is det.
tk_conflicts(M, Slots) :-
    findall(S-A, conflict(M, S, A), Slots0),
    sort(Slots0, Slots).

%!  tk_same_value(+Key1, +Key2, -Same) is det.
tk_same_value(K10, K20, Same) :-
    key_in(K10, K1), key_in(K20, K2),
    ( K1 == K2 -> Same = @(true) ; Same = @(false) ).

%!  tk_match_heads(+M, +Ss, +A, +Key, -Right, -Wrong) is det.
%
%   The heads of a slot (of a view's union) whose value is (Right) or is not Key.
tk_match_heads(M, Ss0, A0, K0, Right, Wrong) :-
    maplist(atom_in, Ss0, Ss), atom_in(A0, A), key_in(K0, K),
    match_heads(M, Ss, A, K, Right, Wrong).

%!  tk_claims(+M, +GoldIds, -Items) is det.
%
%   One item per slot with live facts, for learning from agreement: each
%   source's latest live claim (valid time, then recording), as
%   -(Sources, ValueIndexes, NValues, GoldIndex, Values, Attribute). GoldIndex
%   is the index of the value of a confirmed fact of that slot (GoldIds), or -1.
tk_claims(M, Gold0, Items) :-
    maplist(atom_in, Gold0, Gold),
    claims(M, Gold, Items0), janus_out(Items0, Items).

% ---------------------------------------------------------------- rules

%!  tk_add_rule(+M, +Scope, +RuleId, +Text, -Undefined) is det.
%
%   Add a rule in Scope ("" the shared layer, whose rules apply in every scope);
%   Undefined: tms:undefined_calls/3.
tk_add_rule(M, Sc0, RuleId0, Text, Undefined) :-
    atom_in(Sc0, Sc), atom_in(RuleId0, RuleId),
    add_rule(M, Sc, RuleId, Text), undefined_calls(M, RuleId, Undefined).

%!  tk_load_rule(+M, +Scope, +RuleId, +Text) is det: add it unevaluated (journal replay).
tk_load_rule(M, Sc0, RuleId0, Text) :-
    atom_in(Sc0, Sc), atom_in(RuleId0, RuleId),
    load_rule(M, Sc, RuleId, Text).

%!  tk_drop_rule(+M, +RuleId) is det.
tk_drop_rule(M, RuleId0) :- atom_in(RuleId0, RuleId), drop_rule(M, RuleId).

%!  tk_rules(+M, +Scope, -Rules) is det.
%
%   -(RuleId, Text, RuleScope) of the rules that apply in Scope (the shared ones
%   and the scope's own), in the order they were added; @(none): every rule.
tk_rules(M, Sc0, Rules) :-
    ( Sc0 == @(none) -> Sc = Sc0 ; atom_in(Sc0, Sc) ),
    scope_rules(M, Sc, Rules).

%!  tk_beliefs(+M, +Scope, -Beliefs) is det.
tk_beliefs(M, Sc0, Beliefs) :-
    atom_in(Sc0, Sc),
    beliefs(M, Sc, Beliefs0), janus_out(Beliefs0, Beliefs).

%!  tk_explain(+M, +Scope, +Text, -Proof) is det.
tk_explain(M, Sc0, Text, Proof) :-
    atom_in(Sc0, Sc),
    explain_belief(M, Sc, Text, Proof0), janus_out(Proof0, Proof).

%!  tk_what_if(+M, +Scope, +Now, +Adds, +Retracts, -Changes) is det.
%
%   Evaluate adding the facts Adds and retracting the ids Retracts inside a
%   snapshot that is always discarded. Changes is -(SlotChanges, Gained, Lost)
%   with SlotChanges a list of -(S, A, HeadsBefore, HeadsAfter) for each
%   touched slot whose heads change. Errors of the hypothetical writes are
%   raised as by tk_add/3 and tk_retract/4.
tk_what_if(M, Sc0, Now, Adds, Retracts0, Changes) :-
    atom_in(Sc0, Sc), must_be(integer, Now),
    maplist(fact_in, Adds, Recs), maplist(atom_in, Retracts0, Retracts),
    what_if(M, Sc, Now, Recs, Retracts, Changes0), janus_out(Changes0, Changes).

% ---------------------------------------------------------------- errors

%!  tk_error(+Caught, +Goal, -Error) is det.
%
%   Error is the atom ok when nothing was caught (Caught unbound), else
%   -(Formal, Args, Message): the name of an ISO error's formal term, its
%   arguments as data, and the message of its context (or ""). After an
%   error, the unbound outputs of Goal are bound to @(none) so that janus
%   can return the bindings.
tk_error(E, Goal, Err) :-
    (   var(E)
    ->  Err = ok
    ;   error_data(E, Err),
        term_variables(Goal, Vs),
        maplist(=(@(none)), Vs)
    ).

%!  tk_run_tests(+Dir, -Passed, -Failed) is det.
%
%   Run every plunit suite shipped in Dir/tests/ (selftest:run_suites/2), loaded
%   on this call only (plunit is a third of the time every process would spend
%   loading truthkeeper); Dir is the package's, wherever the modules came from.
tk_run_tests(Dir0, Passed, Failed) :-
    atom_in(Dir0, Dir), directory_file_path(Dir, selftest, Selftest),
    use_module(Selftest, [run_suites/2]),
    selftest:run_suites(Passed, Failed).
