:- use_module('../truthkeeper').

% Rows as janus delivers them from Python: strings, numbers and -(...) tuples.
row(Id, V, VF, RA, Src, Row) :-
    Row = -(Id, "s", "a", V, VF, @(none), RA, "agent", Src, @(none), @(none), "[]", []).

:- begin_tests(truthkeeper, [cleanup(forall(member(M, [-9301, -9302, -9303, -9304]), tk_close(M)))]).
test(typed_values_conflict, St == conflict) :-
    tk_new(-9301, "temporal", ["agent"]),
    row("f1", "true", 10, 1, "x", R1), row("f2", -("b", 1), 10, 2, "y", R2),
    tk_add(-9301, [R1, R2], @(none), @(false)),
    tk_resolve(-9301, "s", "a", St, _).
test(string_one_and_number_one_differ, St == conflict) :-
    tk_new(-9301, "temporal", ["agent"]),
    row("f1", "1", 10, 1, "x", R1), row("f2", 1, 10, 2, "y", R2),
    tk_add(-9301, [R1, R2], @(none), @(false)),
    tk_resolve(-9301, "s", "a", St, _).
test(resolution_groups_newest_first, [St == resolved, Gs == [[f2, f1]]]) :-
    tk_new(-9301, "temporal", ["agent"]),
    row("f1", 1, 10, 1, "x", R1), row("f2", 1, 20, 2, "y", R2),
    tk_add(-9301, [R1, R2], @(none), @(false)),
    tk_resolve(-9301, "s", "a", St, Gs).
test(fact_rows, Row = -(f1, s, a, 10, @(none), 1, agent, x, @(none), "[]", head)) :-
    tk_new(-9301, "temporal", ["agent"]),
    row("f1", 1, 10, 1, "x", R1), tk_add(-9301, [R1], @(none), @(false)),
    tk_facts(-9301, ["f1"], [Row]).
test(unknown_fact, error(existence_error(fact, zz))) :-
    tk_new(-9301, "temporal", ["agent"]),
    tk_facts(-9301, ["zz"], _).
test(same_value, [A == @(true), B == @(false)]) :-
    tk_same_value(1, 1, A),
    tk_same_value("true", -("b", 1), B).
test(order_pairs_ignore_values, Ps == [[0, [1]]]) :-
    tk_new(-9301, "temporal", ["agent"]),
    tk_order_pairs(-9301, [-(0, "k", "x", 10, "agent", @(none), @(none), @(none)),
                           -(1, "k", "x", 20, "agent", @(none), @(none), @(none))], Ps).
test(ended_candidate, Ds == [0-ended]) :-
    tk_new(-9302, "temporal", ["agent"]),
    tk_advance(-9302, 100, _),
    tk_phi_store(-9302, [-(0, "k", "x", 10, "agent", @(none), @(none), 50),
                         -(1, "k", "y", 5, "agent", @(none), @(none), 500)], [], Ds, []).
test(ended_head_then_unknown, St == unknown) :-
    tk_new(-9303, "temporal", ["agent"]),
    tk_advance(-9303, 1000, _),
    tk_add(-9303, [-("a", "s", "x", "v1", 10, @(none), 1, "agent", "src", @(none), @(none), "{}", []),
                   -("b", "s", "x", "v2", 20, 30, 2, "agent", "src", @(none), @(none), "{}", [])], @(none), @(false)),
    tk_resolve(-9303, "s", "x", St, _).
test(advance_ends_a_fact, [St0-St1 == resolved-unknown]) :-
    tk_new(-9304, "temporal", ["agent"]),
    tk_advance(-9304, 100, _),
    tk_add(-9304, [-("a", "s", "x", "v1", 10, 200, 1, "agent", "src", @(none), @(none), "{}", [])], @(none), @(false)),
    tk_resolve(-9304, "s", "x", St0, _),
    tk_advance(-9304, 200, Next),
    assertion(Next == @(none)),
    tk_resolve(-9304, "s", "x", St1, _).
test(error_as_data, E == [existence_error, [fact, zz], ""]) :-
    catch(tk_facts(-9301, ["zz"], _), X, true),
    tk_error(X, g, E).
test(janus_out, Out == [[a, [b]], x-y, [c, [d, [e]]], -(r, -(s, t))]) :-
    fast:janus_out([a-[b], x-y, c-(d-[e]), -(r, -(s, t))], Out).
test(no_error, E == ok) :-
    tk_error(_, g, E).
test(policies, Ps == [temporal, authority_first, temporal_within_authority]) :-
    tk_policies(All),                  % the shipped ones first; a process may add its own
    append(Ps, _, All), length(Ps, 3).
:- end_tests(truthkeeper).
