:- use_module('../store').
:- use_module('../dominance').
:- use_module('../clock').
:- use_module(library(aggregate), [aggregate_all/3]).

add(M, Id, V, VF, VT, RA) :-
    add_facts(M, [f(Id, s, attr, V, VF, VT, RA, agent, src, @(none), @(none), "", [])]).

heads(M, Hs) :- slot_heads(M, s, attr, Hs0), msort(Hs0, Hs).

:- begin_tests(clock, [cleanup(drop_memory(-9501))]).
test(advance_passes_an_end, [H0-H1-Next == [a]-[]-none]) :-
    new_memory(-9501, temporal, [agent]),
    advance(-9501, 50, _),
    add(-9501, a, 1, 10, 100, 1),
    heads(-9501, H0),
    advance(-9501, 100, Next),
    heads(-9501, H1).
test(advance_says_when_next, Next == 100) :-
    new_memory(-9501, temporal, [agent]),
    advance(-9501, 50, _),
    add(-9501, a, 1, 10, 100, 1),
    advance(-9501, 60, Next).
test(end_fact_ends_the_head, H == []) :-
    new_memory(-9501, temporal, [agent]),
    advance(-9501, 50, _),
    add(-9501, a, 1, 10, none, 1),
    end_fact(-9501, a, 40, 100),
    heads(-9501, H).
test(end_fact_unknown, [error(existence_error(fact, nope))]) :-
    new_memory(-9501, temporal, [agent]),
    end_fact(-9501, nope, 40, 100).
test(end_before_begin, [error(domain_error(valid_to_after_valid_from, a))]) :-
    new_memory(-9501, temporal, [agent]),
    add(-9501, a, 1, 10, none, 1),
    end_fact(-9501, a, 5, 100).
% every slot's heads as kept, and as a derivation at the clock gives them
slots_kept(M, Kept) :-
    findall(S-Hs, ( between(1, 6, I), atom_concat(s, I, S), slot_heads(M, S, attr, H0),
                    msort(H0, Hs) ), Kept).
slots_fresh(M, Fresh) :-
    store:store_now(M, Now),
    findall(S-Hs, ( between(1, 6, I), atom_concat(s, I, S),
                    heads_at(M, S, attr, none, Now, H0), msort(H0, Hs) ), Fresh).
% the earliest time after Now at which a fact of a timed slot begins or ends
true_next(M, Now, Next) :-
    (   aggregate_all(min(T), ( store:timed(M, S, A), store:fact(M, _, S, A, _, VF, VT, _, _, _),
                                ( T = VF ; VT \== none, T = VT ), T > Now ), Min)
    ->  Next = Min
    ;   Next = none
    ).

test(the_clock_moving_by_small_and_large_steps_and_back_recomputes_every_slot_it_passes,
     Bad == []) :-
    findall(Seed-Step, ( between(1, 5, Seed),
                         new_memory(-9501, temporal, [agent]),
                         set_random(seed(Seed)),
                         advance(-9501, 0, _),
                         forall(between(1, 60, I),
                                ( atom_concat(f, I, Id), random_between(1, 6, K),
                                  atom_concat(s, K, S),
                                  ( random_between(1, 6, 1) -> random_between(300, 3000, VF0)
                                  ; random_between(0, 200, VF0) ),   % some far apart
                                  VF is VF0 << 20 + I,
                                  ( random_between(1, 2, 1)
                                  -> random_between(1, 30, D), VT is VF + D << 20
                                  ;  VT = none ),
                                  add_facts(-9501, [f(Id, S, attr, I, VF, VT, I, agent, src,
                                                      @(none), @(none), "", [])]) )),
                         between(1, 40, Step),
                         store:store_now(-9501, Now),
                         ( random_between(1, 8, 1) -> random_between(65, 120, J)
                         ; random_between(1, 6, 1) -> random_between(-120, -1, J) % back
                         ; random_between(0, 6, J) ),
                         Now1 is Now + J << 20 + 7,
                         advance(-9501, Now1, Next),
                         true_next(-9501, Now1, True),
                         slots_kept(-9501, Kept), slots_fresh(-9501, Fresh),
                         ( Kept \== Fresh
                         ; True == none, Next \== none
                         ; True \== none, ( Next == none ; Next > True ) ) ), Bad).
test(moving_the_clock_past_one_end_costs_what_that_slot_costs, [R-Next == (!)-Due]) :-
    new_memory(-9501, temporal, [agent]),
    advance(-9501, 0, _),
    findall(f(Id, S, attr, I, 0, VT, I, agent, src, @(none), @(none), "", []),
            ( between(1, 5000, I), atom_concat(f, I, Id), atom_concat(s, I, S),
              VT is I << 16 ), Fs),                 % one slot ends every 65 ms
    add_facts(-9501, Fs),
    forall(between(1, 5000, I), ( atom_concat(s, I, S), slot_heads(-9501, S, attr, _) )),
    advance(-9501, 1000 << 16, _),
    Due is 1001 << 16,
    call_with_inference_limit(advance(-9501, (1000 << 16) + 1, Next), 5 000, R).
test(moving_the_clock_past_one_end_in_a_long_slot_costs_what_its_front_costs,
     [R-Hs == (!)-[f4000]]) :-
    new_memory(-9501, temporal, [agent]),
    advance(-9501, 0, _),
    findall(f(Id, s, attr, I, I, VT, I, agent, src, @(none), @(none), "", []),
            ( between(1, 4000, I), atom_concat(f, I, Id),
              VT is (I + 10) << 16 ), Fs),          % one fact ends every 65 ms
    add_facts(-9501, Fs),
    slot_heads(-9501, s, attr, _),
    advance(-9501, 1000 << 16, _),
    call_with_inference_limit(advance(-9501, (1001 << 16) + 1, _), 3 000, R),
    slot_heads(-9501, s, attr, Hs).
:- end_tests(clock).
