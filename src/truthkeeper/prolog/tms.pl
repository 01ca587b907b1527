:- module(tms,
          [ add_rule/4,         % +M, +Scope, +RuleId, +Text
            load_rule/4,        % +M, +Scope, +RuleId, +Text
            rule_text/3,        % ?M, ?RuleId, ?Text
            scope_rules/3,      % +M, +Scope, -Rules
            rule_scope/3,       % ?M, ?RuleId, ?Scope
            belief/3,           % +M, +Scope, ?Goal  (tabled, incremental)
            beliefs/3,          % +M, +Scope, -Beliefs
            explain_belief/4,   % +M, +Scope, +Text, -Proof
            drop_rules/1,       % +M
            forget_tables/1,    % +M (its belief tables; derived again when next asked)
            drop_rule/2,        % +M, +RuleId
            rule_ids/2,         % +M, -RuleIds (in the order they were added)
            undefined_calls/3,  % +M, +RuleId, -PIs
            what_if/6           % +M, +Scope, +Now, +Recs, +Retracts, -Changes
          ]).
:- use_module(dominance, [add_facts/2, retract_fact/4, slot_heads/4, heads_holds/4, head/4,
                          fresh_all/1]).
:- use_module(union, [heads_union/6]).
:- use_module(clock, [advance/3]).
:- use_module(store, [holds/4, fact/10, store_now/2, mem_gen/2, gen_read/1]).
:- use_module(policies, [pure_builtin/1, guarded/2, new_budget/1]).
:- autoload(library(time), [call_with_time_limit/2]).  % loaded when a rule first runs
:- use_module(library(error), [permission_error/3, domain_error/2, existence_error/2,
                                syntax_error/1]).
:- use_module(library(lists), [member/2, append/3]).
:- use_module(library(apply), [maplist/3, include/3]).
:- use_module(settree, [not_in/3]).

/** <module> Derived beliefs and their justifications

Users add rules over holds(Subject, Attribute, Value), the view of current,
resolved slots. belief/2 is tabled incrementally over holds/4 and rule/4, so
when a supporting fact is superseded or retracted the dependent beliefs
change without a full recomputation.

Rules and beliefs are per scope (Scope '' is the shared layer, the unscoped
memory's). A rule added in a scope applies in that scope only; a shared rule
applies in every scope. In the shared layer holds/3 is holds/4 over the
unscoped subjects; in a scope it is the scope's view (view_holds/5): for each
slot, the union of the scope's facts and the shared layer's, decided by the
policy as the view's current answer is (union:heads_union/6), with the
subjects named as the view names them. A scope's beliefs are tabled over
store:mem_gen/2, which a write bumps once such a table read it: they are recomputed,
when asked, after any write; the shared layer's follow holds/4 slot by slot.

Rules are data: they are parsed with term_string/3 and interpreted by body/3,
which calls only holds/3, other rule heads and a short list of pure builtins
(safe_goal/1). A rule that mentions anything else (halt, shell, assert, ...)
is refused.
*/

:- dynamic rule/4 as incremental.       % M, RuleId, Head, Body
%!  rule_text(?M, ?RuleId, ?Text) is nondet.
:- dynamic rule_text/3.
%!  rule_scope(?M, ?RuleId, ?Scope) is nondet.
%   M, RuleId, Scope ('' shared).
:- dynamic rule_scope/3.

:- table belief/3 as incremental.

:- det(add_rule/4).
:- det(load_rule/4).
:- det(beliefs/3).
:- det(drop_rules/1).
:- det(forget_tables/1).
:- det(drop_rule/2).
:- det(rule_ids/2).
:- det(undefined_calls/3).
:- det(what_if/6).

%!  belief(+M, +Scope, ?Goal) is nondet.
belief(M, Sc, G) :-
    rule(M, Id, G, B),
    rule_applies(M, Id, Sc),
    body(M, Sc, B).

% rule_applies(+M, +RuleId, +Scope): a shared rule applies everywhere, a scope's in it.
rule_applies(M, Id, Sc) :-
    rule_scope(M, Id, RS),
    ( RS == '' -> true ; RS == Sc ).

body(_, _, true) :- !.
body(M, Sc, (A, B)) :- !, body(M, Sc, A), body(M, Sc, B).
body(M, Sc, (C -> T ; E)) :- !, ( body(M, Sc, C) -> body(M, Sc, T) ; body(M, Sc, E) ).
body(M, Sc, (A ; B)) :- !, ( body(M, Sc, A) ; body(M, Sc, B) ).
body(M, Sc, (C -> T)) :- !, ( body(M, Sc, C) -> body(M, Sc, T) ).
body(M, Sc, \+ G) :- !, \+ body(M, Sc, G).
body(M, Sc, holds(S, A, V)) :- !, view_holds(M, Sc, S, A, V).
body(_, _, G) :- builtin(G), !, guarded(tk_rule_budget, G).
body(M, Sc, G) :- belief(M, Sc, G).

% read_scope(+M, +Scope): a scope's tables are about to be read, so the next write must
% bump the generation they depend on. view_holds/5 says so only when a table is evaluated;
% a table left complete by a discarded snapshot (what_if) is read without that, and the
% snapshot took the mark back: the view's beliefs then no longer followed the writes.
read_scope(M, Sc) :-
    ( Sc == '' -> true ; gen_read(M) ).

%!  view_holds(+M, +Scope, ?S, ?A, ?V) is nondet.
%
%   holds/3 as the layer Scope sees it ('' the shared layer): S is a subject as
%   that view names it. No subject holding the scope separator is ever seen,
%   so no rule text can name another scope's key.
view_holds(M, '', S, A, V) :- !,
    holds(M, S, A, V),
    \+ scoped_key(S).
view_holds(M, Sc, S, A, V) :-
    mem_gen(M, _),                      % a dependency: any write re-evaluates the scope
    gen_read(M),                        % (touch/1 bumps it only when a table read it)
    atom_concat(Sc, '\x1F\', Pre),
    view_slot(M, Pre, S, A),
    view_heads(M, Pre, S, A, Heads),
    heads_holds(M, A, Heads, Vs),
    member(V, Vs).

scoped_key(K) :- sub_atom(K, _, _, _, '\x1F\').

% view_slot(+M, +Pre, ?S, ?A): the slots (S, A) with a head in the scope (store keys
% Pre+S) or in the shared layer, each once.
view_slot(M, Pre, S, A) :-
    atom(S), !,
    \+ scoped_key(S),
    atom_concat(Pre, S, SK),
    findall(A, ( head(M, SK, A, _) ; head(M, S, A, _) ), As0),
    sort(As0, As),
    member(A, As).
view_slot(M, Pre, S, A) :-
    var(S),
    findall(S1-A, ( head(M, K, A, _), layer_subject(Pre, K, S1) ), Ps0),
    sort(Ps0, Ps),
    member(S-A, Ps).

layer_subject(Pre, K, S) :-
    (   atom_concat(Pre, S0, K)
    ->  S = S0
    ;   \+ scoped_key(K),
        S = K
    ).

% view_heads(+M, +Pre, +S, +A, -Heads): the heads of the union of the scope's slot and
% the shared one at the memory's clock; the shared slot's own heads when the scope has
% no fact there.
view_heads(M, Pre, S, A, Heads) :-
    atom_concat(Pre, S, SK),
    (   fact(M, _, SK, A, _, _, _, _, _, _)
    ->  once(store_now(M, Now)),
        heads_union(M, [SK, S], A, none, Now, Heads)
    ;   findall(H, head(M, S, A, H), Heads)
    ).

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

%!  add_rule(+M, +Scope, +RuleId, +Text) is det.
%
%   Parse Text as exactly one clause, check it, add it to memory M in Scope
%   ('' shared) and evaluate it there once (within the limits): a rule that
%   raises is refused.
%   @error syntax_error(What) when Text does not parse
%   @error domain_error(one_clause, Text) for several clauses or trailing text
%   @error domain_error(singleton_free_rule, Names) for variables used once
%   @error domain_error(rule_head, Head) when the head is not callable
%   @error permission_error(modify, static_procedure, N/A) for a reserved head
%   @error permission_error(call, rule_goal, N/A) for a body calling what rules may not
%   @error rule_error(Message) when evaluating the rule raises or exceeds the limits
add_rule(M, Sc, RuleId, Text) :-
    load_rule(M, Sc, RuleId, Text),
    catch(evaluate(M, Sc), E,
          ( drop_rule(M, RuleId), throw(E) )).

%!  load_rule(+M, +Scope, +RuleId, +Text) is det.
%
%   Parse, check and add a rule without evaluating it (journal replay: a rule
%   that was accepted stays, even if the data now makes it raise).
load_rule(M, Sc, RuleId, Text) :-
    must_be(atom, Sc),
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
    assertz(rule_scope(M, RuleId, Sc)),
    assertz(rule_text(M, RuleId, Text)),
    assertz(rule(M, RuleId, H, B)).

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

%!  rule_limits(-Inferences, -Seconds) is det.
%
%   The inference and wall-time budgets of one evaluation of the rules
%   (beliefs, why, what_if); the memory its builtins create is bounded by
%   policies:budget_bytes/1.
rule_limits(4_000_000, 10).

%!  limited(+M, :Goal) is det.
%
%   Run Goal once within the budgets. Exceeding one, or any error while
%   evaluating rules, abandons memory M's tables (no other memory's) and raises
%   rule_error/1.
limited(M, G) :-
    fresh_all(M),                       % stale slots derived before any table is built
    rule_limits(L, Secs),
    new_budget(tk_rule_budget),
    catch(call_with_time_limit(Secs, call_with_inference_limit(G, L, R)), E, true),
    (   var(E), R \== inference_limit_exceeded
    ->  true
    ;   abolish_table_subgoals(belief(M, _, _)),
        (   E == time_limit_exceeded
        ->  format(string(Msg), "evaluating the rules took more than ~w s; remove the \c
                   rule that does not end with remove_rule", [Secs]),
            throw(error(rule_error(Msg), _))
        ;   nonvar(E)
        ->  message_to_codes(E, Msg),
            throw(error(rule_error(Msg), _))
        ;   format(string(Msg), "evaluating the rules took more than ~D inferences: \c
                   a rule derives without end, or more than one evaluation may (a join \c
                   over many subjects: narrow it); remove it with remove_rule", [L]),
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

%!  undefined_calls(+M, +RuleId, -PIs) is det.
%
%   The predicates ("N/A" strings, sorted) the rule's body calls that no rule applying
%   where it applies defines (it among them): a rule may name a head a later rule
%   defines, so this is no error, but a call of one has no answers (a typo, most often:
%   holdz(U, a, v)).
undefined_calls(M, RuleId, PIs) :-
    rule(M, RuleId, _, B),
    rule_scope(M, RuleId, Sc),
    findall(N/A, ( body_goal(B, G), functor(G, N, A),
                   \+ control_pi(N/A), \+ builtin_pi(N/A),
                   \+ ( rule(M, R, H, _), rule_applies(M, R, Sc), functor(H, N, A) ) ),
            PIs0),
    sort(PIs0, PIs1),
    findall(T, ( member(PI, PIs1), format(string(T), "~q", [PI]) ), PIs).

% body_goal(+Body, -Goal): a goal a rule body calls (through its control constructs)
body_goal(B, _) :- var(B), !, fail.
body_goal((A, B), G) :- !, ( body_goal(A, G) ; body_goal(B, G) ).
body_goal((A ; B), G) :- !, ( body_goal(A, G) ; body_goal(B, G) ).
body_goal((A -> B), G) :- !, ( body_goal(A, G) ; body_goal(B, G) ).
body_goal(\+ A, G) :- !, body_goal(A, G).
body_goal(G, G) :- callable(G).

%!  drop_rules(+M) is det.
drop_rules(M) :-
    retractall(rule(M, _, _, _)),
    retractall(rule_text(M, _, _)),
    retractall(rule_scope(M, _, _)),
    forget_tables(M).

%!  forget_tables(+M) is det.
%
%   Memory M's belief tables go (no other memory's): they are derived again when next
%   asked for. After an erasure, the answers they kept about the erased facts go too.
forget_tables(M) :-
    abolish_table_subgoals(belief(M, _, _)).

%!  drop_rule(+M, +RuleId) is det.
%
%   @error existence_error(rule, RuleId) when memory M has no such rule.
drop_rule(M, RuleId) :-
    (   rule_text(M, RuleId, _)
    ->  retractall(rule(M, RuleId, _, _)),
        retractall(rule_text(M, RuleId, _)),
        retractall(rule_scope(M, RuleId, _))
    ;   existence_error(rule, RuleId)
    ).

%!  rule_ids(+M, -RuleIds) is det.
rule_ids(M, Ids) :-
    findall(Id, rule_text(M, Id, _), Ids).

%!  beliefs(+M, +Scope, -Beliefs) is det.
%
%   Every belief derived in Scope, as -(Name, Args, Text) terms, sorted.
beliefs(M, Sc, Beliefs) :-
    belief_pis(M, Sc, PIs),
    limited(M, findall(G, ( member(N/A, PIs), functor(G, N, A), belief(M, Sc, G) ), Gs0)),
    sort(Gs0, Gs),
    maplist(belief_out, Gs, Beliefs).

% evaluate(+M, +Scope): every belief of Scope derived (within the budgets), none listed: a
% rule's check when it is added (listing them all, each as text, made adding the 400th
% rule over 40,000 beliefs 90 ms)
evaluate(M, Sc) :-
    belief_pis(M, Sc, PIs),
    limited(M, forall(( member(N/A, PIs), functor(G, N, A), belief(M, Sc, G) ), true)).

% the predicates the rules that apply in Scope define
belief_pis(M, Sc, PIs) :-
    read_scope(M, Sc),
    findall(N/A, ( rule(M, Id, H, _), rule_applies(M, Id, Sc), functor(H, N, A) ), PIs0),
    sort(PIs0, PIs).

belief_out(G, -(N, Args, Text)) :-
    G =.. [N|Args0],
    maplist(arg_out, Args0, Args),
    term_string(G, Text).

arg_out(X, X) :- atomic(X), !.
arg_out(@(X), @(X)) :- atom(X), !.
arg_out(X, S) :- term_string(X, S).

%!  explain_belief(+M, +Scope, +Text, -Proof) is det.
%
%   Proof is the justification tree of the belief written as Text in Scope, or
%   the atom none when it does not hold there. Nodes (n-ary - terms, tuples in Python):
%   -(belief, Text, RuleId, RuleText, Children), -(holds, S, A, V, HeadIds),
%   test-Text, not-Text.
explain_belief(M, Sc, Text, Proof) :-
    read_scope(M, Sc),
    catch(term_string(G, Text), _, fail),
    callable(G),
    % through the table of every belief (G bound would table a variant of its own, and
    % the facts' call variants it reads would keep its subject after an erasure)
    limited(M, once(( belief(M, Sc, G0), G0 = G, prove_belief(M-Sc, G, [G], P) ; P = none ))),
    !,
    Proof = P.
explain_belief(_, _, _, none).

% prove_belief(+M-Scope, +G, +Stack, -Proof) and prove_body/4 below: the proof of a
% belief in a scope (M-Sc stands for the memory and the scope it is proved in).
prove_belief(M-Sc, G, Stack, -(belief, Text, Rid, RText, Children)) :-
    rule(M, Rid, G, B),
    rule_applies(M, Rid, Sc),
    prove_body(M-Sc, B, Stack, Children),
    rule_text(M, Rid, RText),
    term_string(G, Text).

prove_body(_, true, _, []) :- !.
prove_body(M, (A, B), S, Ps) :- !,
    prove_body(M, A, S, PA), prove_body(M, B, S, PB), append(PA, PB, Ps).
prove_body(M, (C -> T ; E), S, Ps) :- !,
    (   prove_body(M, C, S, PC)
    ->  prove_body(M, T, S, PT), append(PC, PT, Ps)
    ;   M = M0-Sc, \+ body(M0, Sc, C), prove_body(M, E, S, Ps)
    ).
prove_body(M, (A ; B), S, Ps) :- !,
    ( prove_body(M, A, S, Ps) ; prove_body(M, B, S, Ps) ).
prove_body(M, (C -> T), S, Ps) :- !,
    prove_body(M, C, S, PC), !, prove_body(M, T, S, PT), append(PC, PT, Ps).
prove_body(M-Sc, \+ G, _, [not-Text]) :- !,
    \+ body(M, Sc, G),
    term_string(\+ G, Text).
prove_body(M-Sc, holds(Sub, A, V), _, [-(holds, Sub, A, V, Heads)]) :- !,
    view_holds(M, Sc, Sub, A, V),
    holds_heads(M, Sc, Sub, A, V, Heads).
prove_body(_, G, _, [test-Text]) :-
    builtin(G), !,
    guarded(tk_rule_budget, G),
    term_string(G, Text).
prove_body(M-Sc, G, Stack, [P]) :-
    belief(M, Sc, G),
    \+ ( member(X, Stack), X =@= G ),
    prove_belief(M-Sc, G, [G|Stack], P).

% holds_heads(+M, +Scope, +S, +A, +V, -Heads): the heads that make holds(S, A, V) true
% in the scope's view (of a set, those of the member V).
holds_heads(M, Sc, S, A, V, Heads) :-
    (   Sc == ''
    ->  findall(H, head(M, S, A, H), Hs)
    ;   atom_concat(Sc, '\x1F\', Pre),
        view_heads(M, Pre, S, A, Hs)
    ),
    include(holds_value(M, V), Hs, Heads).

holds_value(M, V, H) :-
    fact(M, H, _, _, K, _, _, _, _, _),
    ( K == V -> true ; K = m(V, _) ).

%!  what_if(+M, +Scope, +Now, +Recs, +Retracts, -Changes) is det.
%
%   Which heads and beliefs would change in Scope's view at the clock Now if the
%   facts Recs were added and the facts Retracts retracted: -(SlotChanges,
%   Gained, Lost), slots named by their store keys; nothing changes (the
%   evaluation, the clock's move included, runs in a snapshot). In a scope, a
%   slot's heads are those of the view's union.
what_if(M, Sc, Now, Recs, Retracts, Changes) :-
    findall(S-A, ( member(f(_, S, A, _, _, _, _, _, _, _, _, _, _), Recs)
                 ; member(Id, Retracts), fact(M, Id, S, A, _, _, _, _, _, _) ),
            Slots0),
    sort(Slots0, Slots),
    % what the snapshot reads is derived before it (a cache, not a write): a slot first
    % derived inside a snapshot and changed there was seen twice by the next one
    forall(member(S-A, Slots), seen_heads(M, Sc, S, A, _)),
    ( rule_text(M, _, _) -> fresh_all(M) ; true ),
    read_scope(M, Sc),                  % marked outside: the snapshot cannot take it back
    snapshot(what_if_in(M, Sc, Now, Recs, Retracts, Slots, Changes)).

what_if_in(M, Sc, Now, Recs, Retracts, Slots, -(SlotChanges, Gained, Lost)) :-
    once(store_now(M, Clock)),
    (   Clock \== none, Clock >= Now
    ->  true
    ;   advance(M, Now, _)
    ),
    findall(S-A-Hs, ( member(S-A, Slots), seen_heads(M, Sc, S, A, Hs) ), Before),
    beliefs(M, Sc, B0),
    add_facts(M, Recs),
    advance(M, Now, _),
    forall(member(Id, Retracts), retract_fact(M, Id, 0, what_if)),
    findall(-(S, A, Hs0, Hs1), ( member(S-A, Slots), member(S-A-Hs0, Before),
                                 seen_heads(M, Sc, S, A, Hs1),
                                 msort(Hs0, X), msort(Hs1, Y), X \== Y ), SlotChanges),
    beliefs(M, Sc, B1),
    not_in(B1, B0, Gained),             % (settree: subtract/3 walked a list)
    not_in(B0, B1, Lost).


% seen_heads(+M, +Scope, +Key, +A, -Heads): the heads of the slot with store key Key as
% Scope's view sees them (in a scope: the union of the scope's slot and the shared one).
seen_heads(M, '', K, A, Hs) :- !,
    slot_heads(M, K, A, Hs).
seen_heads(M, Sc, K, A, Hs) :-
    atom_concat(Sc, '\x1F\', Pre),
    ( atom_concat(Pre, S, K) -> true ; S = K ),
    view_heads(M, Pre, S, A, Hs).

%!  scope_rules(+M, +Scope, -Rules) is det.
%
%   -(RuleId, Text, RuleScope) of the rules that apply in Scope (the shared
%   ones and the scope's own), in the order they were added; every scope's
%   when Scope is @(none) (the owner listing the scopes).
scope_rules(M, Sc, Rules) :-
    findall(-(Id, T, RS), ( rule_text(M, Id, T), rule_scope(M, Id, RS),
                            ( RS == '' -> true ; Sc == @(none) -> true ; RS == Sc ) ),
            Rules).
