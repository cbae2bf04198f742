defmodule ExDb.YawsDynopts do
  @moduledoc """
  Yaws's server, when it starts, writes a module `yaws_dynopts` to
  `~/.yaws/yaws/<id>/yaws_dynopts.erl` and compiles it: constant answers to
  "does this OTP have `http_uri:parse/1`" and "`filelib:safe_relative_path/2`",
  instead of the version checks of the module Yaws ships. That costs about 60
  ms of every boot, writes into `$HOME`, and in a release (which has no
  `include` directory for it) fails with errors in the log and falls back to
  the shipped module.

  This is the module Yaws generates for an OTP whose erts is at least 11.0
  (OTP 23 on): no `http_uri` (removed in OTP 25), `filelib:safe_relative_path/2`.
  It is compiled when this project is built and loaded by `load/0` before Yaws
  starts; its `generate/1` is then a no-op, as in Yaws's generated module.

  One change: `start_error_logger/0` (called by `yaws_log` at start) does not
  add OTP's legacy `error_logger` handler to `logger`. That handler only
  feeds report handlers added with `error_logger:add_report_handler/2`, and
  neither Yaws nor this application adds one (Yaws's messages go to `logger`
  as they are); at every stop of the VM it logged
  `{removed_failing_handler,error_logger}`.

  elixir-yaws and elixir-db carry this file as two copies, their application's
  module name the one difference; crates/cli/tests/contestant_copies.rs keeps
  them so.
  """

  @source ~S"""
  -module(yaws_dynopts).
  -export([have_http_uri_parse/0, have_safe_relative_path/0,
           http_uri_parse/1, safe_relative_path/2,
           start_error_logger/0, generate/1, purge_old_code/0, is_generated/0]).

  start_error_logger() -> ok.
  generate(_) -> ok.
  purge_old_code() -> code:soft_purge(yaws_dynopts).
  is_generated() -> true.

  have_http_uri_parse() -> false.
  http_uri_parse(Uri) ->
      case uri_string:parse(Uri) of
          {error,_,_}=Error -> Error;
          UriMap ->
              Scheme = case maps:find(scheme, UriMap) of
                           {ok, S} -> list_to_existing_atom(S);
                           error -> ''
                       end,
              UserInfo = case maps:find(userinfo, UriMap) of
                             {ok, U} -> U;
                             error -> []
                         end,
              Host = case maps:find(host, UriMap) of
                         {ok, H} -> H;
                         error -> []
                     end,
              Port = case maps:find(port, UriMap) of
                         {ok, Po} -> Po;
                         error ->
                             case Scheme of
                                 http -> 80;
                                 https -> 443;
                                 _ -> undefined
                             end
                     end,
              Path = case maps:find(path, UriMap) of
                         {ok, Pa} -> Pa;
                         error -> []
                     end,
              Query = case maps:find(query, UriMap) of
                          {ok, Q} -> [$?|Q];
                          error -> []
                      end,
              {ok, {Scheme, UserInfo, Host, Port, Path, Query}}
      end.

  have_safe_relative_path() -> true.
  safe_relative_path(Filename, Cwd) ->
      filelib:safe_relative_path(Filename, Cwd).
  """

  @beam (fn ->
           {:ok, tokens, _} = :erl_scan.string(String.to_charlist(@source))

           forms =
             tokens
             |> Enum.chunk_while(
               [],
               fn
                 {:dot, _} = t, acc -> {:cont, Enum.reverse([t | acc]), []}
                 t, acc -> {:cont, [t | acc]}
               end,
               fn acc -> {:cont, acc} end
             )
             |> Enum.reject(&(&1 == []))
             |> Enum.map(fn form ->
               {:ok, f} = :erl_parse.parse_form(form)
               f
             end)

           {:ok, :yaws_dynopts, beam} = :compile.forms(forms, [:report, :nowarn_deprecated_function])
           beam
         end).()

  @doc "Loads the generated `yaws_dynopts` in place of the one Yaws ships."
  def load do
    {:module, :yaws_dynopts} = :code.load_binary(:yaws_dynopts, ~c"yaws_dynopts.erl", @beam)
    :ok
  end
end
