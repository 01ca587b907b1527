:- module(fast,
          [ tk_fast/3,            % +Name, +Args, -Out
            janus_out/2           % +Term, -Out
          ]).
:- use_module(library(error), [domain_error/2]).
:- use_module(library(apply), [maplist/3]).
:- use_module(library(lists), [member/2]).

/** <module> The goals Python runs on every read and write, in one janus call each

bridge.call(Name, *Args) runs tk_fast(Name, Args, Out) through janus's
apply_once/3: no goal text to parse and no dict of bindings to build, about
4 us less a call than query_once (bridge.ask). The goals are a fixed table
(goal/4): a name from Python selects one of them and never builds one; the
arguments are data, as bridge.ask's inputs are.

Out is [ok|Results], [error, Error] (tk_error/3's term, mapped by the bridge's
one table) or [failed, Name].

janus (1.5.3) never frees a Python list made inside a tuple: a -(A, [B]) that
crosses into Python leaks the list and all it holds, on every call (200,000
calls with a pair holding a two-item list: 40 MB). Every answer that can hold
such a term crosses as janus_out/2 makes it: a -(...) term with a list among
its arguments becomes a list of those arguments (Python unpacks either alike).
*/

:- det(tk_fast/3).
:- det(janus_out/2).

tk_fast(Name0, Args, Out) :-
    atom_string(Name, Name0),
    (   goal(Name, Args, Goal, Results)
    ->  (   catch(Goal, E, true)
        ->  truthkeeper:tk_error(E, Goal, Err),
            ( Err == ok -> Out = [ok|Results] ; Out = [error, Err] )
        ;   Out = [failed, Name]
        )
    ;   domain_error(fast_goal, Name)
    ).

% goal(?Name, ?Args, -Goal, -Results): the table
goal(resolve_rows, [M, S, A],
     truthkeeper:tk_resolve_rows(M, S, A, St, Gs), [St, Gs]).
goal(resolve_rows_at, [M, S, A, K, V],
     truthkeeper:tk_resolve_rows_at(M, S, A, K, V, St, Gs), [St, Gs]).
goal(resolve_union, [M, Ss, A, K, V],
     truthkeeper:tk_resolve_union(M, Ss, A, K, V, St, Gs), [St, Gs]).
goal(add, [M, Fs, C, D],
     truthkeeper:tk_add(M, Fs, C, D), []).
goal(phi_store, [M, Cs, Ss],
     truthkeeper:tk_phi_store(M, Cs, Ss, Ds, Dps), [Ds, Dps]).
goal(facts, [M, Ids],
     truthkeeper:tk_facts(M, Ids, Rs), [Rs]).
goal(filter_ids, [M, Sc, Ids],
     truthkeeper:tk_filter_ids(M, Sc, Ids, Vs, Rs), [Vs, Rs]).

%!  janus_out(+Term, -Out) is det.
%
%   Term as it may cross into Python: every -(...) term with a list among its
%   arguments made a list of its arguments, at any depth.
janus_out(T, T) :- var(T), !.
janus_out(T, Out) :- is_list(T), !, maplist(janus_out, T, Out).
janus_out(T, Out) :-
    compound(T), compound_name_arguments(T, -, As0), !,
    maplist(janus_out, As0, As),
    (   member(A, As), is_list(A)
    ->  Out = As
    ;   compound_name_arguments(Out, -, As)
    ).
janus_out(T, T).
