:- use_module('../policies').

% r(Id, Key, ValidFrom, RecordedAt, Rank, Source, [])
:- begin_tests(policies, [cleanup(forall(member(N, [plunit_erratum, plunit_bad, plunit_raises]),
                                            retractall(policies:custom_policy(N, _, _))))]).
test(registry, Ps == [temporal, authority_first, temporal_within_authority]) :-
    findall(P, policy(P), All),        % the shipped ones first; a process may add its own
    append(Ps, _, All), length(Ps, 3).
test(ranks, Rs == [h-2, v-1, a-0]) :- tier_ranks([h, v, a], Rs).
test(temporal_newer_different_value) :-
    policy_dominates(temporal, r(b, 2, 20, 1, 0, s, []), r(a, 1, 10, 2, 0, t, [])).
test(temporal_older_does_not, fail) :-
    policy_dominates(temporal, r(a, 1, 10, 1, 0, s, []), r(b, 2, 20, 2, 0, s, [])).
test(same_value_corroborates, fail) :-
    policy_dominates(temporal, r(b, 1, 20, 1, 0, s, []), r(a, 1, 10, 2, 0, s, [])).
test(typed_keys_differ) :-
    policy_dominates(temporal, r(b, @(true), 20, 1, 0, s, []), r(a, true, 10, 2, 0, s, [])).
test(same_source_tie_is_a_correction) :-
    policy_dominates(temporal, r(b, 2, 10, 5, 0, s, []), r(a, 1, 10, 4, 0, s, [])).
test(different_sources_tie_neither, fail) :-
    (   policy_dominates(temporal, r(b, 2, 10, 5, 0, s, []), r(a, 1, 10, 4, 0, t, []))
    ;   policy_dominates(temporal, r(a, 1, 10, 4, 0, t, []), r(b, 2, 10, 5, 0, s, []))
    ).
test(candidate_tie_neither, fail) :-
    policy_dominates(temporal, r(b, 2, 10, none, 0, @(none), []), r(a, 1, 10, none, 0, @(none), [])).
test(temporal_ignores_tier) :-
    policy_dominates(temporal, r(b, 2, 20, 1, 0, s, []), r(a, 1, 10, 2, 3, s, [])).
test(authority_first_higher_tier_wins_even_if_older) :-
    policy_dominates(authority_first, r(h, 1, 10, 1, 3, s, []), r(a, 2, 20, 2, 1, s, [])).
test(authority_first_lower_tier_never, fail) :-
    policy_dominates(authority_first, r(a, 2, 20, 2, 1, s, []), r(h, 1, 10, 1, 3, s, [])).
test(authority_first_within_tier_newer) :-
    policy_dominates(authority_first, r(b, 2, 20, 2, 1, s, []), r(a, 1, 10, 1, 1, s, [])).
test(twa_newer_same_tier) :-
    policy_dominates(temporal_within_authority, r(b, 2, 20, 2, 1, s, []), r(a, 1, 10, 1, 1, s, [])).
test(twa_newer_higher_tier) :-
    policy_dominates(temporal_within_authority, r(b, 2, 20, 2, 3, s, []), r(a, 1, 10, 1, 1, s, [])).
test(twa_newer_lower_tier_does_not, fail) :-
    policy_dominates(temporal_within_authority, r(a, 2, 20, 2, 1, s, []), r(v, 1, 10, 1, 2, s, [])).
test(twa_older_higher_tier_does_not, fail) :-
    policy_dominates(temporal_within_authority, r(h, 1, 10, 1, 3, s, []), r(a, 2, 20, 2, 1, s, [])).
test(may_dominate_ignores_values) :-
    may_dominate(temporal, r(b, 1, 20, 1, 0, s, []), r(a, 1, 10, 2, 0, s, [])).
test(custom_policy_registered_and_interpreted) :-
    register_policy(plunit_erratum,
        "dominates(F, G) :- meta(F, erratum, @(true)), \\+ meta(G, erratum, @(true)).", [erratum]),
    policy_dominates(plunit_erratum, r(a, 1, 10, 1, 0, s, [erratum- @(true)]), r(b, 2, 20, 2, 0, s, [])),
    \+ policy_dominates(plunit_erratum, r(b, 2, 20, 2, 0, s, []), r(a, 1, 10, 1, 0, s, [erratum- @(true)])).
test(custom_policy_may_not_call_anything, error(permission_error(call, policy_goal, shell/1))) :-
    register_policy(plunit_bad, "dominates(F, G) :- shell(F), newer(F, G).", []).
test(shipped_names_are_taken, error(permission_error(modify, policy, temporal))) :-
    register_policy(temporal, "dominates(F, G) :- newer(F, G).", []).
test(a_raising_policy_is_stopped, error(rule_error(_))) :-
    register_policy(plunit_raises, "dominates(F, G) :- value(F, V), X is V / 0, X > 1.", []),
    policy_dominates(plunit_raises, r(a, 1, 10, 1, 0, s, []), r(b, 2, 20, 2, 0, s, [])).
test(insert_newest_is_newest_first, forall(member(R-Rs, [
        r(n, x, 5, 9, 0, s, [])-[],
        r(n, x, 5, 9, 0, s, [])-[r(a, x, 7, 1, 0, s, []), r(b, y, 5, 9, 0, s, []), r(c, y, 5, 2, 0, s, [])],
        r(n, x, 5, none, 0, s, [])-[r(a, x, 5, 1, 0, s, []), r(c, y, 1, 2, 0, s, [])],
        r(n, x, 9, 1, 0, s, [])-[r(a, x, 5, 1, 0, s, [])]]))) :-
    newest_first([R|Rs], Expected),
    insert_newest(R, Rs, Got),
    Got == Expected.
:- end_tests(policies).
