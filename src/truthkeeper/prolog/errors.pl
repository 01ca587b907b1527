:- module(errors,
          [ error_data/2          % +Caught, -Error
          ]).

/** <module> Errors as data for the bridge

The modules raise ISO error terms (library(error)); truthkeeper:tk_error/3
turns a caught one into data that janus returns, which the Python bridge maps
to the truthkeeper error family in its one table (logic/bridge.py).
*/

:- det(error_data/2).

%!  error_data(+Caught, -Error) is det.
%
%   [Formal, Args, Message]: the name of an ISO error's formal term, its
%   arguments as data (atomic, or A-B of atomics, else written as a string),
%   and the message of its context (or ""); any other ball as [throw, [Text],
%   ""]. A list, not a -(...) term: janus leaks a list made inside a tuple
%   (fast:janus_out/2).
error_data(E, Err) :-
    (   E = error(Formal, Ctx), compound(Formal)
    ->  Formal =.. [Name|Args0],
        maplist(arg_data, Args0, Args),
        ctx_message(Ctx, Msg),
        Err = [Name, Args, Msg]
    ;   E = error(Formal, Ctx), atom(Formal)
    ->  ctx_message(Ctx, Msg),
        Err = [Formal, [], Msg]
    ;   term_string(E, S),
        Err = [throw, [S], ""]
    ).

arg_data(X, X) :- atomic(X), !.
arg_data(X-Y, X-Y) :- atomic(X), atomic(Y), !.
arg_data(X, S) :- term_string(X, S).

ctx_message(Ctx, Msg) :-
    (   nonvar(Ctx), Ctx = context(_, M0), nonvar(M0), atomic(M0)
    ->  atom_string(M0, Msg)
    ;   Msg = ""
    ).
