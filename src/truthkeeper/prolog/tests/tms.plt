:- use_module('../store').
:- use_module('../tms').

:- begin_tests(tms, [cleanup((drop_rules(-9201), drop_memory(-9201)))]).
test(belief_follows_holds, [B1 == [ana], B2 == []]) :-
    new_memory(-9201, temporal, [agent]),
    add_rule(-9201, '', r1, "needs_vpn(U) :- holds(U, location, L), L \\== office"),
    assertz(store:holds(-9201, ana, location, home)),
    findall(U, belief(-9201, '', needs_vpn(U)), B1),
    retract(store:holds(-9201, ana, location, home)),
    assertz(store:holds(-9201, ana, location, office)),
    findall(U, belief(-9201, '', needs_vpn(U)), B2),
    drop_rules(-9201).
test(recursive_rules_terminate, Xs == [b, c]) :-
    new_memory(-9201, temporal, [agent]),
    add_rule(-9201, '', r1, "reach(X, Y) :- holds(X, next, Y)"),
    add_rule(-9201, '', r2, "reach(X, Z) :- reach(X, Y), holds(Y, next, Z)"),
    assertz(store:holds(-9201, a, next, b)), assertz(store:holds(-9201, b, next, c)), assertz(store:holds(-9201, c, next, a)),
    findall(Y, ( belief(-9201, '', reach(a, Y)), Y \== a ), Ys), sort(Ys, Xs),
    drop_rules(-9201).
test(unsafe_body_refused, error(permission_error(call, rule_goal, shell/1))) :-
    new_memory(-9201, temporal, [agent]),
    add_rule(-9201, '', r1, "p(X) :- holds(X, a, _), shell(X)").
test(halt_refused, error(permission_error(call, rule_goal, halt/0))) :-
    new_memory(-9201, temporal, [agent]),
    add_rule(-9201, '', r1, "p :- halt").
test(syntax_error, error(syntax_error(_))) :-
    add_rule(-9201, '', r1, "x'), halt. %").
test(reserved_head, error(permission_error(modify, static_procedure, holds/3))) :-
    add_rule(-9201, '', r1, "holds(a, b, c)").
test(remove_rule, Ids == []) :-
    new_memory(-9201, temporal, [agent]),
    add_rule(-9201, '', r1, "p(X) :- holds(X, a, b)"),
    drop_rule(-9201, r1), rule_ids(-9201, Ids).
test(remove_unknown_rule, error(existence_error(rule, r9))) :-
    drop_rule(-9201, r9).
test(explain, P = -(belief, _, r1, _, [-(holds, ana, location, home, [f1]), test-_])) :-
    new_memory(-9201, temporal, [agent]),
    add_rule(-9201, '', r1, "needs_vpn(U) :- holds(U, location, L), L \\== office"),
    assertz(store:kept_head(-9201, ana, location, f1)),
    assertz(store:fact(-9201, f1, ana, location, home, 1, none, 1, agent, s, "")),
    assertz(store:holds(-9201, ana, location, home)),
    explain_belief(-9201, '', "needs_vpn(ana)", P),
    drop_rules(-9201).
test(scope_rule_stays_in_its_scope, [Ana == [a], Bob == [], Shared == []]) :-
    new_memory(-9201, temporal, [agent]),
    add_rule(-9201, 'user:ana', r1, "mine(U) :- holds(U, city, rome)"),
    assertz(store:kept_head(-9201, 'user:ana\x1F\a', city, f1)),
    assertz(store:fact(-9201, f1, 'user:ana\x1F\a', city, rome, 1, none, 1, agent, s, "")),
    assertz(store:store_now(-9201, 5)),
    touch(-9201),
    findall(U, belief(-9201, 'user:ana', mine(U)), Ana),
    findall(U, belief(-9201, 'user:bob', mine(U)), Bob),
    findall(U, belief(-9201, '', mine(U)), Shared),
    drop_rules(-9201).
test(scope_beliefs_follow_writes_that_bump_only_a_read_generation,
     [Before == [], G1 == 1, G2 == 1, After == [a], G3 == 2]) :-
    new_memory(-9201, temporal, [agent]),
    add_rule(-9201, 'user:ana', r1, "mine(U) :- holds(U, city, rome)"),  % evaluates it
    findall(U, belief(-9201, 'user:ana', mine(U)), Before),
    assertz(store:kept_head(-9201, 'user:ana\x1F\a', city, f1)),
    assertz(store:fact(-9201, f1, 'user:ana\x1F\a', city, rome, 1, none, 1, agent, s, "")),
    touch(-9201), mem_gen(-9201, G1),    % a table read the generation: bumped
    touch(-9201), mem_gen(-9201, G2),    % none read it since: left alone
    findall(U, belief(-9201, 'user:ana', mine(U)), After),
    touch(-9201), mem_gen(-9201, G3),
    drop_rules(-9201).
test(shared_layer_seen_from_a_scope, [Ana == [b]]) :-
    new_memory(-9201, temporal, [agent]),
    add_rule(-9201, '', r1, "rome(U) :- holds(U, city, rome)"),
    assertz(store:kept_head(-9201, b, city, f2)),
    assertz(store:holds(-9201, b, city, rome)),
    assertz(store:fact(-9201, f2, b, city, rome, 1, none, 1, agent, s, "")),
    touch(-9201),
    findall(U, belief(-9201, 'user:ana', rome(U)), Ana),
    drop_rules(-9201).
test(no_rule_names_another_scopes_key, Xs == []) :-
    new_memory(-9201, temporal, [agent]),
    add_rule(-9201, 'user:bob', r1, "peek(P) :- holds('user:ana\\x1F\\a', phone, P)"),
    assertz(store:kept_head(-9201, 'user:ana\x1F\a', phone, f3)),
    assertz(store:holds(-9201, 'user:ana\x1F\a', phone, '555')),
    touch(-9201),
    findall(P, ( belief(-9201, 'user:bob', peek(P)) ; belief(-9201, '', peek(P)) ), Xs),
    drop_rules(-9201).
test(explain_missing, P == none) :-
    new_memory(-9201, temporal, [agent]),
    explain_belief(-9201, '', "needs_vpn(bob)", P).
:- end_tests(tms).
