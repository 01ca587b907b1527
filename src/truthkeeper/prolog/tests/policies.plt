:- use_module('../policy_temporal').
:- use_module('../policy_authority_first', []).
:- use_module('../policy_temporal_within_authority', []).

% r(Id, Value, ValidFrom, TieBreak, Rank)
:- begin_tests(policy_temporal).
test(newer_different_value) :- policy_temporal:dominates(r(b, 2, 20, 1, 0), r(a, 1, 10, 2, 0)).
test(older_does_not, fail) :- policy_temporal:dominates(r(a, 1, 10, 1, 0), r(b, 2, 20, 2, 0)).
test(same_value_corroborates, fail) :- policy_temporal:dominates(r(b, 1, 20, 1, 0), r(a, 1, 10, 2, 0)).
test(tie_broken_by_recorded_at) :- policy_temporal:dominates(r(b, 2, 10, 5, 0), r(a, 1, 10, 4, 0)).
test(candidate_tie_neither, fail) :- policy_temporal:dominates(r(b, 2, 10, 0, 0), r(a, 1, 10, 0, 0)).
test(ignores_tier) :- policy_temporal:dominates(r(b, 2, 20, 1, 0), r(a, 1, 10, 2, 3)).
:- end_tests(policy_temporal).

:- begin_tests(policy_authority_first).
test(higher_tier_wins_even_if_older) :- policy_authority_first:dominates(r(h, 1, 10, 1, 3), r(a, 2, 20, 2, 1)).
test(lower_tier_never, fail) :- policy_authority_first:dominates(r(a, 2, 20, 2, 1), r(h, 1, 10, 1, 3)).
test(within_tier_newer) :- policy_authority_first:dominates(r(b, 2, 20, 2, 1), r(a, 1, 10, 1, 1)).
:- end_tests(policy_authority_first).

:- begin_tests(policy_temporal_within_authority).
test(newer_same_tier) :- policy_temporal_within_authority:dominates(r(b, 2, 20, 2, 1), r(a, 1, 10, 1, 1)).
test(newer_higher_tier) :- policy_temporal_within_authority:dominates(r(b, 2, 20, 2, 3), r(a, 1, 10, 1, 1)).
test(newer_lower_tier_does_not, fail) :- policy_temporal_within_authority:dominates(r(a, 2, 20, 2, 1), r(v, 1, 10, 1, 2)).
test(older_higher_tier_does_not, fail) :- policy_temporal_within_authority:dominates(r(h, 1, 10, 1, 3), r(a, 2, 20, 2, 1)).
:- end_tests(policy_temporal_within_authority).
