:- module(tms,
          [ add_rule/3,         % +M, +RuleId, +Text
            load_rule/3,        % +M, +RuleId, +Text
            rule_text/3,        % ?M, ?RuleId, ?Text
            belief/2,           % +M, ?Goal  (tabled, incremental)
            beliefs/2,          % +M, -Beliefs
            explain_belief/3,   % +M, +Text, -Proof
            drop_rules/1,       % +M
            drop_rule/2,        % +M, +RuleId
            rule_ids/2,         % +M, -RuleIds (in the order they were added)
            what_if/4           % +M, +Recs, +Retracts, -Changes
          ]).
:- use_module(dominance, [add_facts/2, retract_fact/4, slot_heads/4]).
:- use_module(store, [holds/4, head/4, fact/10]).
:- use_module(policies, [pure_builtin/1]).
:- use_module(library(error), [permission_error/3, domain_error/2, existence_error/2,
                                syntax_error/1]).
:- use_module(library(lists), [member/2, append/3, subtract/3]).
:- use_module(library(apply), [maplist/3]).

/** <module> Derived beliefs and their justifications

Users add rules over holds(Subject, Attribute, Value), the view of current,
resolved slots. belief/2 is tabled incrementally over holds/4 and rule/4, so
when a supporting fact is superseded or retracted the dependent beliefs
change without a full recomputation.

Rules are data: they are parsed with term_string/3 and interpreted by body/2,
which calls only holds/3, other rule heads and a short list of pure builtins
(safe_goal/1). A rule that mentions anything else (halt, shell, assert, ...)
is refused.
*/

:- dynamic rule/4 as incremental.       % M, RuleId, Head, Body
:- dynamic rule_text/3.

:- table belief/2 as incremental.

:- det(add_rule/3).
:- det(load_rule/3).
:- det(beliefs/2).
:- det(drop_rules/1).
:- det(drop_rule/2).
:- det(rule_ids/2).
:- det(what_if/4).

%!  belief(+M, ?Goal) is nondet.
belief(M, G) :-
    rule(M, _, G, B),
    body(M, B).

body(_, true) :- !.
body(M, (A, B)) :- !, body(M, A), body(M, B).
body(M, (C -> T ; E)) :- !, ( body(M, C) -> body(M, T) ; body(M, E) ).
body(M, (A ; B)) :- !, ( body(M, A) ; body(M, B) ).
body(M, (C -> T)) :- !, ( body(M, C) -> body(M, T) ).
body(M, \+ G) :- !, \+ body(M, G).
body(M, holds(S, A, V)) :- !, holds(M, S, A, V).
body(_, G) :- builtin(G), !, call(G).
body(M, G) :- belief(M, G).

%!  builtin(+Goal) is semidet.
%
%   The pure builtins a rule body may call.
builtin(G) :-
    functor(G, N, A),
    builtin_pi(N/A).

builtin_pi(PI) :- pure_builtin(PI).
builtin_pi(member/2).   builtin_pi(between/3).  builtin_pi(length/2).

control_pi((',')/2). control_pi((;)/2). control_pi((->)/2). control_pi((\+)/1).
control_pi(true/0).  control_pi(holds/3).

%!  add_rule(+M, +RuleId, +Text) is det.
%
%   Parse Text as exactly one clause, check it, add it to memory M and
%   evaluate it once (within the limits): a rule that raises is refused.
%   @error syntax_error(What) when Text does not parse
%   @error domain_error(one_clause, Text) for several clauses or trailing text
%   @error domain_error(singleton_free_rule, Names) for variables used once
%   @error domain_error(rule_head, Head) when the head is not callable
%   @error permission_error(modify, static_procedure, N/A) for a reserved head
%   @error permission_error(call, rule_goal, N/A) for a body calling what rules may not
%   @error rule_error(Message) when evaluating the rule raises or exceeds the limits
add_rule(M, RuleId, Text) :-
    load_rule(M, RuleId, Text),
    catch(beliefs(M, _), E,
          ( drop_rule(M, RuleId), throw(E) )).

%!  load_rule(+M, +RuleId, +Text) is det.
%
%   Parse, check and add a rule without evaluating it (journal replay: a rule
%   that was accepted stays, even if the data now makes it raise).
load_rule(M, RuleId, Text) :-
    parse_rule(Text, T, Singletons),
    clause_parts(T, H, B),
    (   nonvar(H), callable(H)
    ->  true
    ;   domain_error(rule_head, H)
    ),
    functor(H, N, A),
    (   ( control_pi(N/A) ; builtin_pi(N/A) ; system_pred(N/A) )
    ->  permission_error(modify, static_procedure, N/A)
    ;   true
    ),
    (   unsafe_goal(B, Bad)
    ->  permission_error(call, rule_goal, Bad)
    ;   true
    ),
    (   Singletons == []
    ->  true
    ;   domain_error(singleton_free_rule, Singletons)
    ),
    assertz(rule(M, RuleId, H, B)),
    assertz(rule_text(M, RuleId, Text)).

% parse_rule(+Text, -Term, -SingletonNames): one clause, with or without its final full
% stop; anything after it is refused.
parse_rule(Text, T, Singletons) :-
    (   catch(read_clause_text(Text, T, Singletons), error(syntax_error(end_of_file), _), fail)
    ->  true
    ;   string_concat(Text, "\n.", Closed),
        read_clause_text(Closed, T, Singletons)
    ).

read_clause_text(Text, T, Singletons) :-
    setup_call_cleanup(
        open_string(Text, S),
        ( read_term(S, T, [singletons(Ss)]),
          read_term(S, Rest, []) ),
        close(S)),
    (   T == end_of_file
    ->  syntax_error(empty_rule)
    ;   Rest == end_of_file
    ->  true
    ;   domain_error(one_clause, Text)
    ),
    findall(Name, ( member(Name=_, Ss), \+ sub_atom(Name, 0, _, _, '_') ), Singletons).

%!  rule_limits(-Inferences) is det.
%
%   The inference budget of one evaluation of the rules (beliefs, why, what_if).
rule_limits(4_000_000).

%!  limited(:Goal) is det.
%
%   Run Goal once within the inference budget. Exceeding it, or any error
%   while evaluating rules, abandons the tables and raises rule_error/1.
limited(G) :-
    rule_limits(L),
    catch(call_with_inference_limit(G, L, R), E, true),
    (   var(E), R \== inference_limit_exceeded
    ->  true
    ;   abolish_all_tables,
        (   nonvar(E)
        ->  message_to_codes(E, Msg),
            throw(error(rule_error(Msg), _))
        ;   format(string(Msg), "evaluating the rules took more than ~D inferences \c
                   (a rule that derives without end?); remove it with remove_rule", [L]),
            throw(error(rule_error(Msg), _))
        )
    ).

message_to_codes(error(rule_error(M), _), M) :- !.
message_to_codes(E, Msg) :-
    (   catch(message_to_codes_(E, Msg), _, fail)
    ->  true
    ;   format(string(Msg), "~q", [E])
    ).

message_to_codes_(E, Msg) :-
    E = error(Formal, _),
    format(string(Msg), "a rule raised ~q while evaluated; remove it with remove_rule \c
           or guard its body", [Formal]).

clause_parts(T, H, B) :-
    (   nonvar(T), T = (H0 :- B0)
    ->  H = H0, B = B0
    ;   H = T, B = true
    ).

system_pred(N/A) :-
    functor(G, N, A),
    predicate_property(system:G, defined).

%!  unsafe_goal(+Body, -Bad) is semidet.
%
%   Bad is a goal of Body that rules may not call.
unsafe_goal(V, V) :- var(V), !.
unsafe_goal((A, B), Bad) :- !, ( unsafe_goal(A, Bad) -> true ; unsafe_goal(B, Bad) ).
unsafe_goal((A ; B), Bad) :- !, ( unsafe_goal(A, Bad) -> true ; unsafe_goal(B, Bad) ).
unsafe_goal((A -> B), Bad) :- !, ( unsafe_goal(A, Bad) -> true ; unsafe_goal(B, Bad) ).
unsafe_goal(\+ A, Bad) :- !, unsafe_goal(A, Bad).
unsafe_goal(G, G) :- \+ callable(G), !.
unsafe_goal(G, _) :- functor(G, N, A), ( control_pi(N/A) ; builtin_pi(N/A) ), !, fail.
unsafe_goal(G, N/A) :- functor(G, N, A), system_pred(N/A), !.
unsafe_goal(G, N/A) :- functor(G, N, A), sub_atom(N, 0, _, _, '$'), !.

%!  drop_rules(+M) is det.
drop_rules(M) :-
    retractall(rule(M, _, _, _)),
    retractall(rule_text(M, _, _)),
    abolish_all_tables.

%!  drop_rule(+M, +RuleId) is det.
%
%   @error existence_error(rule, RuleId) when memory M has no such rule.
drop_rule(M, RuleId) :-
    (   rule_text(M, RuleId, _)
    ->  retractall(rule(M, RuleId, _, _)),
        retractall(rule_text(M, RuleId, _))
    ;   existence_error(rule, RuleId)
    ).

%!  rule_ids(+M, -RuleIds) is det.
rule_ids(M, Ids) :-
    findall(Id, rule_text(M, Id, _), Ids).

%!  beliefs(+M, -Beliefs) is det.
%
%   Every derived belief, as -(Name, Args, Text) terms, sorted.
beliefs(M, Beliefs) :-
    findall(N/A, ( rule(M, _, H, _), functor(H, N, A) ), PIs0),
    sort(PIs0, PIs),
    limited(findall(G, ( member(N/A, PIs), functor(G, N, A), belief(M, G) ), Gs0)),
    sort(Gs0, Gs),
    maplist(belief_out, Gs, Beliefs).

belief_out(G, -(N, Args, Text)) :-
    G =.. [N|Args0],
    maplist(arg_out, Args0, Args),
    term_string(G, Text).

arg_out(X, X) :- atomic(X), !.
arg_out(@(X), @(X)) :- atom(X), !.
arg_out(X, S) :- term_string(X, S).

%!  explain_belief(+M, +Text, -Proof) is det.
%
%   Proof is the justification tree of the belief written as Text, or the atom
%   none when it does not hold. Nodes (n-ary - terms, tuples in Python):
%   -(belief, Text, RuleId, RuleText, Children), -(holds, S, A, V, HeadIds),
%   test-Text, not-Text.
explain_belief(M, Text, Proof) :-
    catch(term_string(G, Text), _, fail),
    callable(G),
    limited(once(( belief(M, G), prove_belief(M, G, [G], P) ; P = none ))),
    !,
    Proof = P.
explain_belief(_, _, none).

prove_belief(M, G, Stack, -(belief, Text, Rid, RText, Children)) :-
    rule(M, Rid, G, B),
    prove_body(M, B, Stack, Children),
    rule_text(M, Rid, RText),
    term_string(G, Text).

prove_body(_, true, _, []) :- !.
prove_body(M, (A, B), S, Ps) :- !,
    prove_body(M, A, S, PA), prove_body(M, B, S, PB), append(PA, PB, Ps).
prove_body(M, (C -> T ; E), S, Ps) :- !,
    (   prove_body(M, C, S, PC)
    ->  prove_body(M, T, S, PT), append(PC, PT, Ps)
    ;   \+ body(M, C), prove_body(M, E, S, Ps)
    ).
prove_body(M, (A ; B), S, Ps) :- !,
    ( prove_body(M, A, S, Ps) ; prove_body(M, B, S, Ps) ).
prove_body(M, (C -> T), S, Ps) :- !,
    prove_body(M, C, S, PC), !, prove_body(M, T, S, PT), append(PC, PT, Ps).
prove_body(M, \+ G, _, [not-Text]) :- !,
    \+ body(M, G),
    term_string(\+ G, Text).
prove_body(M, holds(Sub, A, V), _, [-(holds, Sub, A, V, Heads)]) :- !,
    holds(M, Sub, A, V),
    findall(H, head(M, Sub, A, H), Heads).
prove_body(_, G, _, [test-Text]) :-
    builtin(G), !,
    call(G),
    term_string(G, Text).
prove_body(M, G, Stack, [P]) :-
    belief(M, G),
    \+ ( member(X, Stack), X =@= G ),
    prove_belief(M, G, [G|Stack], P).

%!  what_if(+M, +Recs, +Retracts, -Changes) is det.
%
%   Which heads and beliefs would change if the facts Recs were added and the
%   facts Retracts retracted: -(SlotChanges, Gained, Lost); nothing changes (the
%   evaluation runs in a snapshot).
what_if(M, Recs, Retracts, Changes) :-
    findall(S-A, ( member(f(_, S, A, _, _, _, _, _, _, _, _, _, _), Recs)
                 ; member(Id, Retracts), fact(M, Id, S, A, _, _, _, _, _, _) ), Slots0),
    sort(Slots0, Slots),
    findall(S-A-Hs, ( member(S-A, Slots), slot_heads(M, S, A, Hs) ), Before),
    beliefs(M, B0),
    snapshot(what_if_in(M, Recs, Retracts, Slots, Before, B0, Changes)).

what_if_in(M, Recs, Retracts, Slots, Before, B0, -(SlotChanges, Gained, Lost)) :-
    add_facts(M, Recs),
    forall(member(Id, Retracts), retract_fact(M, Id, 0, what_if)),
    findall(-(S, A, Hs0, Hs1), ( member(S-A, Slots), member(S-A-Hs0, Before),
                                 slot_heads(M, S, A, Hs1),
                                 msort(Hs0, X), msort(Hs1, Y), X \== Y ), SlotChanges),
    beliefs(M, B1),
    subtract(B1, B0, Gained),
    subtract(B0, B1, Lost).
