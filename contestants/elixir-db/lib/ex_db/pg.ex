defmodule ExDb.Pg do
  @moduledoc "p1_pgsql connections for the pools: connect, prepare, readable errors."

  @doc "Connects, prepares `statements` (`[{name, sql}]`): `{:ok, pid}` or `{:error, message}`."
  def connect(pg, statements) do
    opts = [
      host: String.to_charlist(pg.host),
      port: pg.port,
      database: String.to_charlist(pg.db),
      user: String.to_charlist(if pg.user == "", do: "postgres", else: pg.user),
      password: String.to_charlist(pg.password),
      connect_timeout: 1_000,
      as_binary: true
    ]

    case safe(fn -> :pgsql.connect(opts) end) do
      {:ok, pid} ->
        case prepare(pid, statements) do
          :ok ->
            {:ok, pid}

          {:error, _} = e ->
            safe(fn -> :pgsql.terminate(pid) end)
            e
        end

      {:error, reason} ->
        {:error, connect_error(reason)}
    end
  end

  defp prepare(_pid, []), do: :ok

  defp prepare(pid, [{name, sql} | rest]) do
    case safe(fn -> :pgsql.prepare(pid, name, sql) end) do
      {:ok, _status, _params, _results} -> prepare(pid, rest)
      {:error, desc} -> {:error, "cannot prepare #{name}: #{message(desc)}"}
    end
  end

  defp safe(fun) do
    fun.()
  catch
    :exit, reason -> {:error, reason}
  end

  @doc "The text of a PostgreSQL error (p1_pgsql gives `[{message, ...}, ...]`)."
  def message(desc) when is_list(desc) do
    case List.keyfind(desc, :message, 0) do
      {:message, m} -> to_string(m)
      nil -> inspect(desc)
    end
  end

  def message(other), do: inspect(other)

  def connect_error({:init, {:error, reason}}), do: "cannot connect (#{:inet.format_error(reason)})"
  def connect_error({:error_response, desc}), do: "refused the connection: #{message(desc)}"
  def connect_error({:authentication, desc}), do: "refused the login: #{message(desc)}"
  def connect_error(other), do: "cannot connect (#{inspect(other)})"

  @doc "`pgsql:execute/3` with a timeout of its own (the driver's is a fixed 5 s)."
  def execute(pid, name, params, timeout) do
    :gen_server.call(pid, {:execute, {name, params}}, timeout)
  end
end
