:- use_module('../store').

% Fixtures use negative handles: a live Memory's handle is always positive.
:- begin_tests(store, [cleanup(drop_memory(-9001))]).
test(tiers_ranked, Rs == [h-2, v-1, a-0]) :-
    new_memory(-9001, temporal, [h, v, a]),
    findall(T-R, tier_rank(-9001, T, R), Rs).
test(tiers_by_rank, Ts == [h, v, a]) :-
    new_memory(-9001, temporal, [h, v, a]),
    retract(store:tier_rank(-9001, h, 2)),   % asserted last, still ranked first
    assertz(store:tier_rank(-9001, h, 2)),
    tiers_by_rank(-9001, Ts).
test(a_checked_binding_records_nothing, N == 0) :-
    new_memory(-9001, temporal, [h, a]),
    bind_source(-9001, ''-s, a, '$check'),
    aggregate_all(count, source_tier(-9001, s, _, _, _), N).
test(a_checked_binding_refuses_another_tier,
     error(permission_error(bind, source_tier, s-h))) :-
    new_memory(-9001, temporal, [h, a]),
    bind_source(-9001, ''-s, h, f1),
    bind_source(-9001, ''-s, a, '$check').
test(unknown_policy, error(domain_error(policy, nope))) :-
    new_memory(-9001, nope, [h]).
test(live_and_retracted, Live == [f1]) :-
    new_memory(-9001, temporal, [h, a]),
    assertz(store:fact(-9001, f1, s, a, 1, 10, none, 1, a, src, "")),
    assertz(store:fact(-9001, f2, s, a, 2, 20, none, 2, a, src, "")),
    assertz(store:retracted(-9001, f2, 3, why)),
    findall(I, live(-9001, I), Live).
test(record, R == r(f1, 1, 10, 1, 0, src, [])) :-
    new_memory(-9001, temporal, [h, a]),
    assertz(store:fact(-9001, f1, s, a, 1, 10, none, 1, a, src, "")),
    record(-9001, f1, R).
test(memories_are_isolated, N == 0) :-
    new_memory(-9001, temporal, [a]),
    new_memory(-9002, temporal, [a]),
    assertz(store:fact(-9002, f1, s, a, 1, 10, none, 1, a, src, "")),
    fact_count(-9001, N),
    drop_memory(-9002).
:- end_tests(store).
