defmodule ExDb.Mysql do
  @moduledoc """
  p1_mysql connections for the pools. `p1_mysql_conn` is the driver's
  connection process (its `p1_mysql` module is one global dispatcher in front
  of such processes; the pool stands in for it). The driver speaks MySQL's
  text protocol only: a query is a string.
  """

  @doc "Connects: `{:ok, pid}` or `{:error, message}` (what the driver logged)."
  def connect(my) do
    me = self()
    # The driver reports through a log function; its errors while connecting
    # become the slot's error message, later ones are dropped.
    log = fn level, format, args ->
      if level == :error, do: send(me, {:ex_db_mysql_log, :io_lib.format(format, args)})
    end

    user = if my.user == "", do: "root", else: my.user

    case :p1_mysql_conn.start(
           String.to_charlist(my.host),
           my.port,
           String.to_charlist(user),
           String.to_charlist(my.password),
           String.to_charlist(my.db),
           1_000,
           log
         ) do
      {:ok, pid} ->
        {:ok, pid}

      {:error, reason} ->
        receive do
          {:ex_db_mysql_log, msg} -> {:error, "cannot connect (#{String.trim(to_string(msg))})"}
        after
          0 -> {:error, "cannot connect (#{inspect(reason)})"}
        end
    end
  end

  @doc "One text query: `{:ok, rows}` (rows of binaries) or `{:error, message}`."
  def query(pid, sql, timeout) do
    case :p1_mysql_conn.squery(pid, sql, self(), timeout: timeout, result_type: :binary) do
      {:data, result} -> {:ok, :p1_mysql.get_result_rows(result)}
      {:error, result} when is_tuple(result) -> {:error, to_string(:p1_mysql.get_result_reason(result))}
      {:error, other} -> {:error, to_string(other)}
      other -> {:error, inspect(other)}
    end
  end
end
