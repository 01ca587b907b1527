:- use_module('../store').
:- use_module('../tms').

:- begin_tests(tms, [cleanup((drop_rules(9201), drop_memory(9201)))]).
test(belief_follows_holds, [B1 == [ana], B2 == []]) :-
    new_memory(9201, temporal, [agent]),
    add_rule(9201, r1, "needs_vpn(U) :- holds(U, location, L), L \\== office", ok(_)),
    assertz(tk_store:holds(9201, ana, location, home)),
    findall(U, belief(9201, needs_vpn(U)), B1),
    retract(tk_store:holds(9201, ana, location, home)),
    assertz(tk_store:holds(9201, ana, location, office)),
    findall(U, belief(9201, needs_vpn(U)), B2),
    drop_rules(9201).
test(recursive_rules_terminate, Xs == [b, c]) :-
    new_memory(9201, temporal, [agent]),
    add_rule(9201, r1, "reach(X, Y) :- holds(X, next, Y)", ok(_)),
    add_rule(9201, r2, "reach(X, Z) :- reach(X, Y), holds(Y, next, Z)", ok(_)),
    assertz(tk_store:holds(9201, a, next, b)), assertz(tk_store:holds(9201, b, next, c)), assertz(tk_store:holds(9201, c, next, a)),
    findall(Y, ( belief(9201, reach(a, Y)), Y \== a ), Ys), sort(Ys, Xs),
    drop_rules(9201).
test(unsafe_body_refused, Kind == unsafe) :-
    new_memory(9201, temporal, [agent]),
    add_rule(9201, r1, "p(X) :- holds(X, a, _), shell(X)", error(Kind, _)).
test(halt_refused, Kind == unsafe) :-
    new_memory(9201, temporal, [agent]),
    add_rule(9201, r1, "p :- halt", error(Kind, _)).
test(syntax_error, Kind == syntax) :-
    add_rule(9201, r1, "x'), halt. %", error(Kind, _)).
test(reserved_head, Kind == head) :-
    add_rule(9201, r1, "holds(a, b, c)", error(Kind, _)).
test(explain, P = -(belief, _, r1, _, [-(holds, ana, location, home, [f1]), test-_])) :-
    new_memory(9201, temporal, [agent]),
    add_rule(9201, r1, "needs_vpn(U) :- holds(U, location, L), L \\== office", ok(_)),
    assertz(tk_store:head(9201, ana, location, f1)),
    assertz(tk_store:holds(9201, ana, location, home)),
    explain_belief(9201, "needs_vpn(ana)", P),
    drop_rules(9201).
test(explain_missing, P == none) :-
    new_memory(9201, temporal, [agent]),
    explain_belief(9201, "needs_vpn(bob)", P).
:- end_tests(tms).
