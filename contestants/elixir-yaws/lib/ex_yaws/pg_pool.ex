defmodule ExYaws.PgPool do
  @moduledoc """
  A fixed pool of p1_pgsql connections, written here because the usual pools
  (DBConnection, poolboy) are on Hex.

  One `ExYaws.PgPool.Conn` process per slot owns one connection (a
  `pgsql_proto` process, linked), prepares the pool's statements on it and
  publishes its pid in the pool's ETS table; when the connection dies it
  clears the slot and reconnects (100 ms, doubling to 1 s between attempts).
  A request picks the slots round-robin (one `:atomics` counter) and calls the
  connection process directly, which runs one statement at a time: requests
  beyond the pool's size queue in its mailbox, as they would in ejabberd's
  p1_pgsql pool. A slot without a connection is skipped; when none has one,
  the request gets the last connection error at once (a 503), without waiting.
  """

  use Supervisor

  @doc """
  Options: `:name` (an atom: the ETS table and the key of the pool), `:size`,
  `:connect` (p1_pgsql connect options), `:prepare` (`[{name, sql}]`),
  `:label` (how errors name the database).
  """
  def start_link(opts), do: Supervisor.start_link(__MODULE__, opts)

  @impl true
  def init(opts) do
    name = Keyword.fetch!(opts, :name)
    size = Keyword.fetch!(opts, :size)
    :ets.new(name, [:named_table, :public, :set, read_concurrency: true])
    :persistent_term.put({__MODULE__, name}, {size, :atomics.new(1, signed: false), Keyword.fetch!(opts, :label)})

    children =
      for i <- 0..(size - 1) do
        Supervisor.child_spec({ExYaws.PgPool.Conn, {i, opts}}, id: {:conn, i})
      end

    Supervisor.init(children, strategy: :one_for_one)
  end

  @doc """
  Waits until every slot has made its first attempt (connected or failed),
  for at most `timeout` ms: the server then listens with its pool ready.
  """
  def await(name, timeout) do
    {size, _, _} = :persistent_term.get({__MODULE__, name})
    wait_slots(name, size, System.monotonic_time(:millisecond) + timeout)
  end

  defp wait_slots(name, size, deadline) do
    if :ets.info(name, :size) < size and System.monotonic_time(:millisecond) < deadline do
      Process.sleep(5)
      wait_slots(name, size, deadline)
    else
      :ok
    end
  end

  @doc "Runs a prepared statement: `{:ok, rows}` or `{:error, message}`."
  def execute(name, statement, params) do
    {size, rr, label} = :persistent_term.get({__MODULE__, name})
    start = rem(:atomics.add_get(rr, 1, 1), size)

    case pick(name, start, size, size) do
      {:ok, pid} ->
        try do
          :pgsql.execute(pid, statement, params)
        catch
          :exit, reason -> {:error, "#{label} is unavailable: #{exit_reason(reason)}; retry later"}
        else
          {:ok, {_command, rows}} -> {:ok, rows}
          {:error, desc} -> {:error, "#{label} failed the statement: #{message(desc)}"}
        end

      {:error, why} ->
        {:error, "#{label} is unavailable: #{why}; retry later"}
    end
  end

  defp pick(name, i, size, left) do
    case :ets.lookup(name, i) do
      [{_, pid}] when is_pid(pid) -> {:ok, pid}
      _ when left > 1 -> pick(name, rem(i + 1, size), size, left - 1)
      [{_, {:down, why}}] -> {:error, why}
      [] -> {:error, "no connection yet"}
    end
  end

  defp exit_reason({:timeout, _}), do: "no answer within 5 s"
  defp exit_reason({reason, {:gen_server, :call, _}}), do: "the connection ended (#{inspect(reason)})"
  defp exit_reason(reason), do: inspect(reason)

  @doc "The text of a PostgreSQL error (p1_pgsql gives `[{message, ...}, ...]`)."
  def message(desc) when is_list(desc) do
    case List.keyfind(desc, :message, 0) do
      {:message, m} -> to_string(m)
      nil -> inspect(desc)
    end
  end

  def message(other), do: inspect(other)

  @doc "Connects once, outside any pool (DDL at boot, the reset command)."
  def connect(opts) do
    :pgsql.connect(opts)
  catch
    :exit, reason -> {:error, reason}
  end

  @doc "A simple query on a pid: `:ok` or `{:error, message}` (the first error)."
  def squery(pid, sql) do
    case :pgsql.squery(pid, sql, 10_000) do
      {:ok, results} ->
        case Enum.find(results, &match?({:error, _}, &1)) do
          nil -> :ok
          {:error, desc} -> {:error, message(desc)}
        end

      other ->
        {:error, inspect(other)}
    end
  end

  @doc "A connect failure, readable."
  def connect_error({:init, {:error, reason}}), do: "cannot connect (#{:inet.format_error(reason)})"
  def connect_error({:error_response, desc}), do: "refused the connection: #{message(desc)}"
  def connect_error({:authentication, desc}), do: "refused the login: #{message(desc)}"
  def connect_error(other), do: "cannot connect (#{inspect(other)})"
end

defmodule ExYaws.PgPool.Conn do
  @moduledoc false
  # One slot of ExYaws.PgPool: owns one connection, reconnects it.
  use GenServer
  require Logger

  def start_link(arg), do: GenServer.start_link(__MODULE__, arg)

  @impl true
  def init({i, opts}) do
    Process.flag(:trap_exit, true)
    state = %{i: i, name: opts[:name], opts: opts, pid: nil, backoff: 100}
    # Every slot connects at once (a p1_pgsql connection reads pg_type before
    # it is ready: about 0.1 s); ExYaws.PgPool.await/2 waits for them.
    {:ok, state, {:continue, :connect}}
  end

  @impl true
  def handle_continue(:connect, state), do: {:noreply, connect(state)}

  @impl true
  def handle_info(:connect, state), do: {:noreply, connect(state)}

  def handle_info({:EXIT, pid, reason}, %{pid: pid} = state) do
    down(state, "the connection ended (#{inspect(reason)})")
    Process.send_after(self(), :connect, 100)
    {:noreply, %{state | pid: nil}}
  end

  def handle_info(_other, state), do: {:noreply, state}

  @impl true
  def terminate(_reason, %{pid: pid}) when is_pid(pid) do
    try do
      :pgsql.terminate(pid)
    catch
      :exit, _ -> :ok
    end
  end

  def terminate(_reason, _state), do: :ok

  defp connect(state) do
    case ExYaws.PgPool.connect(state.opts[:connect]) do
      {:ok, pid} ->
        Process.link(pid)

        case prepare(pid, state.opts[:prepare] || []) do
          :ok ->
            :ets.insert(state.name, {state.i, pid})
            %{state | pid: pid, backoff: 100}

          {:error, why} ->
            Process.unlink(pid)
            catch_exit(fn -> :pgsql.terminate(pid) end)
            retry(state, why)
        end

      {:error, reason} ->
        retry(state, ExYaws.PgPool.connect_error(reason))
    end
  end

  defp prepare(_pid, []), do: :ok

  defp prepare(pid, [{name, sql} | rest]) do
    case :pgsql.prepare(pid, name, sql) do
      {:ok, _status, _params, _results} -> prepare(pid, rest)
      {:error, desc} -> {:error, "cannot prepare #{name}: #{ExYaws.PgPool.message(desc)}"}
    end
  catch
    :exit, reason -> {:error, "the connection ended while preparing (#{inspect(reason)})"}
  end

  defp retry(state, why) do
    down(state, why)
    Process.send_after(self(), :connect, state.backoff)
    %{state | pid: nil, backoff: min(state.backoff * 2, 1_000)}
  end

  defp down(state, why), do: :ets.insert(state.name, {state.i, {:down, why}})

  defp catch_exit(fun) do
    fun.()
  catch
    :exit, _ -> :ok
  end
end
