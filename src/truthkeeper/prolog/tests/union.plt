:- use_module('../store').
:- use_module('../dominance').
:- use_module('../union').
:- use_module('../clock', [advance/3]).
:- use_module(library(apply), [exclude/3]).

% the pairwise definition: among the union's facts known and begun then, those no other
% dominates, less those ended by then
pairwise_union(M, Ss, A, K, V, Heads) :-
    findall(Id, ( member(S, Ss), store:fact(M, Id, S, A, _, VF, _, RA, _, _),
                  ( K == none -> true ; RA =< K ),
                  \+ ( store:retracted(M, Id, RRA, _), ( K == none -> true ; RRA =< K ) ),
                  ( V == none -> true ; VF =< V ) ), Ids),
    heads_among(M, Ids, H0),
    exclude(store:ended_at(M, none, V), H0, H1),
    msort(H1, Heads).

union_sorted(M, Ss, A, K, V, Heads) :-
    heads_union(M, Ss, A, K, V, H0), msort(H0, Heads).


:- begin_tests(union, [cleanup(drop_memory(-9301))]).
% random writes to a scope's slot (u:s) and the shared one (s): two tiers, a few sources,
% a confirmation, links within a slot, facts that end or begin later, retractions, and
% the clock moving; after each, the union at the clock and as of a random earlier time
% against the pairwise definition
test(a_views_heads_are_the_pairwise_heads_of_its_layers, Diffs == []) :-
    findall(P-Seed-I-At, ( member(P, [temporal, temporal_within_authority, authority_first]),
                           between(1, 4, Seed),
                           new_memory(-9301, P, [verified, agent]),
                           advance(-9301, 6, _),
                           set_random(seed(Seed)),
                           between(1, 70, I),
                           atom_concat(f, I, Id),
                           random_member(S, ['u:s', s, s]),
                           random_member(V, [a, b, c]),
                           random_member(T-Src, [agent-x, agent-y, verified-z,
                                                 verified-'confirmation:verified']),
                           random_between(1, 14, VF),
                           ( random_between(1, 4, 1) -> random_between(1, 6, D), VT is VF + D
                           ; VT = none ),
                           (   random_between(1, 10, 1), I > 1
                           ->  random_between(1, I, L), atom_concat(f, L, Sup)
                           ;   Sup = @(none)
                           ),
                           catch(add_facts(-9301, [f(Id, S, attr, V, VF, VT, I, T, Src, Sup,
                                                     @(none), "", [])]),
                                 error(_, _), true),            % refused: nothing
                           (   random_between(1, 7, 1), I > 1
                           ->  random_between(1, I, J), atom_concat(f, J, Old),
                               ( ( store:retracted(-9301, Old, _, _)
                                 ; \+ store:fact(-9301, Old, _, _, _, _, _, _, _, _) ) -> true
                               ; retract_fact(-9301, Old, 1000 + I, wrong) )
                           ;   random_between(1, 6, 1)
                           ->  store:store_now(-9301, Now0), Now1 is Now0 + 1,
                               advance(-9301, Now1, _)
                           ;   true
                           ),
                           store:store_now(-9301, Now),
                           random_between(0, I, K0), ( K0 =:= 0 -> K = none ; K = K0 ),
                           random_between(0, 16, V0),
                           member(At, [now, K-V0]),
                           ( At == now -> KA = none, VA = Now ; KA = K, VA = V0 ),
                           union_sorted(-9301, ['u:s', s], attr, KA, VA, Got),
                           pairwise_union(-9301, ['u:s', s], attr, KA, VA, Want),
                           Got \== Want ), Diffs).
% a scope's one old fact over a shared chain of 3,000: the union reads the layers' kept
% heads and frontiers (pairwise: millions of dominance checks)
test(a_views_read_costs_what_its_layers_heads_and_frontiers_cost, [R-Hs == (!)-[f3000]]) :-
    new_memory(-9301, temporal, [agent]),
    advance(-9301, 10 000, _),
    findall(f(Id, s, attr, I, I, none, I, agent, x, @(none), @(none), "", []),
            ( between(1, 3000, I), atom_concat(f, I, Id) ), Fs),
    add_facts(-9301, Fs),
    add_facts(-9301, [f(mine, 'u:s', attr, -1, 0, none, 3001, agent, y, @(none), @(none),
                        "", [])]),
    slot_heads(-9301, s, attr, _), slot_heads(-9301, 'u:s', attr, _),
    call_with_inference_limit(heads_union(-9301, ['u:s', s], attr, none, 10 000, Hs), 2 000, R).
rec(Id, S, V, T, Tier, Src, RA) :-
    add_facts(-9301, [f(Id, S, attr, V, T, none, RA, Tier, Src, @(none), @(none), "", [])]).

% a slot read under a monotone policy keeps its frontier; a confirmation then makes it
% decided fact by fact: its frontier is no longer the slot's (it lacks the confirmation)
test(a_layer_whose_frontier_a_confirmation_outdated_is_read_fact_by_fact, Hs == [f2]) :-
    new_memory(-9301, temporal, [verified, agent]),
    rec(f1, s, a, 1, agent, x, 1),
    slot_heads(-9301, s, attr, _),
    rec(f2, s, b, 2, verified, 'confirmation:verified', 2),
    rec(h, 'u:s', c, 3, agent, y, 3),
    union_sorted(-9301, ['u:s', s], attr, none, none, Hs).
% a correction (same source, same time, recorded later) across the layers
test(a_correction_in_the_scope_dominates_the_shared_fact_it_ties_with, Hs == [g1]) :-
    new_memory(-9301, temporal, [agent]),
    rec(f1, s, a, 5, agent, x, 1),
    rec(g1, 'u:s', b, 5, agent, x, 2),
    slot_heads(-9301, s, attr, _), slot_heads(-9301, 'u:s', attr, _),
    union_sorted(-9301, ['u:s', s], attr, none, none, Hs).
:- end_tests(union).
