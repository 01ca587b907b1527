:- use_module('../truthkeeper').

% Rows as janus delivers them from Python: strings, numbers and -(...) tuples.
row(Id, V, VF, RA, Src, Row) :-
    Row = -(Id, "s", "a", V, VF, @(none), RA, "agent", Src, @(none), @(none), "[]", []).

:- begin_tests(truthkeeper, [cleanup(tk_close(-9301))]).
test(typed_values_conflict, St == conflict) :-
    tk_new(-9301, "temporal", ["agent"]),
    row("f1", "true", 10, 1, "x", R1), row("f2", -("b", 1), 10, 2, "y", R2),
    tk_add(-9301, [R1, R2]),
    tk_resolve(-9301, "s", "a", St, _).
test(string_one_and_number_one_differ, St == conflict) :-
    tk_new(-9301, "temporal", ["agent"]),
    row("f1", "1", 10, 1, "x", R1), row("f2", 1, 10, 2, "y", R2),
    tk_add(-9301, [R1, R2]),
    tk_resolve(-9301, "s", "a", St, _).
test(resolution_groups_newest_first, [St == resolved, Gs == [[f2, f1]]]) :-
    tk_new(-9301, "temporal", ["agent"]),
    row("f1", 1, 10, 1, "x", R1), row("f2", 1, 20, 2, "y", R2),
    tk_add(-9301, [R1, R2]),
    tk_resolve(-9301, "s", "a", St, Gs).
test(fact_rows, Row = -(f1, s, a, 10, @(none), 1, agent, x, @(none), "[]", head)) :-
    tk_new(-9301, "temporal", ["agent"]),
    row("f1", 1, 10, 1, "x", R1), tk_add(-9301, [R1]),
    tk_facts(-9301, ["f1"], [Row]).
test(unknown_fact, error(existence_error(fact, zz))) :-
    tk_new(-9301, "temporal", ["agent"]),
    tk_facts(-9301, ["zz"], _).
test(same_value, [A == @(true), B == @(false)]) :-
    tk_same_value(1, 1, A),
    tk_same_value("true", -("b", 1), B).
test(order_pairs_ignore_values, Ps == [0-[1]]) :-
    tk_new(-9301, "temporal", ["agent"]),
    tk_order_pairs(-9301, [-(0, "k", "x", 10, "agent", @(none), @(none)),
                           -(1, "k", "x", 20, "agent", @(none), @(none))], Ps).
test(error_as_data, E == -(existence_error, [fact, zz], "")) :-
    catch(tk_facts(-9301, ["zz"], _), X, true),
    tk_error(X, g, E).
test(no_error, E == ok) :-
    tk_error(_, g, E).
test(policies, Ps == [temporal, authority_first, temporal_within_authority]) :-
    tk_policies(Ps).
:- end_tests(truthkeeper).
