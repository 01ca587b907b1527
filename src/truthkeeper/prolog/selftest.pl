:- module(selftest,
          [ run_suites/2          % -Passed, -Failed
          ]).
:- use_module(library(plunit), [run_tests/2]).
:- use_module(library(lists), [member/2, sum_list/2]).
:- use_module(library(aggregate), [aggregate_all/3]).

/** <module> The plunit suites shipped with truthkeeper, run through janus

Loaded only when the suites are run (truthkeeper:tk_run_tests/3).
*/

:- det(run_suites/2).

% An error while loading a suite (a malformed test is left out by plunit, which only
% prints the error) counts as a failed test.
:- dynamic load_error/1.
:- multifile user:message_hook/3.
user:message_hook(Term, error, _) :-
    nb_current(tk_loading_suites, true),
    assertz(load_error(Term)),
    fail.

%!  run_suites(-Passed, -Failed) is det.
%
%   Load and run every plunit suite in tests/ (each file Name.plt holds the
%   unit Name, the module it tests); counts of passed and failed tests.
run_suites(Passed, Failed) :-
    module_property(selftest, file(File)),
    file_directory_name(File, Dir),
    directory_file_path(Dir, 'tests/*.plt', Pattern),
    expand_file_name(Pattern, Files),
    retractall(load_error(_)),
    setup_call_cleanup(nb_setval(tk_loading_suites, true),
                       forall(member(F, Files), load_files(F, [if(changed)])),
                       nb_setval(tk_loading_suites, false)),
    aggregate_all(count, load_error(_), LoadErrors),
    findall(U, ( member(F, Files), file_base_name(F, B), file_name_extension(U, plt, B) ),
            Units),
    plunit:run_tests(Units, [summary(Summary)]),
    Passed = Summary.passed,
    Bad = [LoadErrors, Summary.failed, Summary.timeout, Summary.blocked],
    sum_list(Bad, Failed).
