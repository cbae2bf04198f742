defmodule ExDb.Pool do
  @moduledoc """
  A fixed pool of connections, one kind of driver per pool, written here
  because the usual pools (DBConnection, poolboy) are on Hex. The same module
  from `contestants/elixir-yaws` (`ExYaws.PgPool`), with the connecting left
  to a function so that p1_pgsql, p1_mysql and eredis share it.

  One `ExDb.Pool.Conn` process per slot owns one connection process (linked),
  made by the pool's `:connect` function (which also prepares statements),
  and publishes its pid in the pool's ETS table; when the connection dies the
  slot is cleared and reconnected (100 ms, doubling to 1 s between attempts).

  A request takes the slots round-robin (one `:atomics` counter). p1_pgsql's
  and eredis's connections are `gen_server`s that take concurrent callers
  (p1_pgsql runs their statements one at a time, eredis pipelines them), so
  the request calls the connection process itself. p1_mysql's connection
  process does not: a second request arriving while it waits for the server
  is taken for garbage and ends the connection. So a p1_mysql pool is
  `serialize: true`: the request is run by the slot's process, one at a
  time, as ejabberd runs p1_mysql queries from one process per connection.
  Either way, requests beyond the pool's size queue in a mailbox.

  A slot without a connection is skipped; when none has one, the request
  gets the last connection error at once (a 503). A call to a connection
  that gets no answer within its timeout kills the connection (whose state is
  then unknown), which the slot replaces: a database that went away and came
  back is reconnected without a restart.
  """

  use Supervisor

  @doc """
  Options: `:name` (an atom: the ETS table and the pool's key), `:size`,
  `:label` (how errors name the database), `:connect` (a function returning
  `{:ok, pid}` or `{:error, message}`, called in the slot's process),
  `:serialize` (run requests in the slot's process, one at a time),
  `:timeout` (ms a serialized request may wait for its slot, default 1500).
  """
  def start_link(opts), do: Supervisor.start_link(__MODULE__, opts)

  @impl true
  def init(opts) do
    name = Keyword.fetch!(opts, :name)
    size = Keyword.fetch!(opts, :size)
    :ets.new(name, [:named_table, :public, :set, read_concurrency: true])
    :persistent_term.put(
      {__MODULE__, name},
      {size, :atomics.new(1, signed: false), Keyword.fetch!(opts, :label),
       Keyword.get(opts, :serialize, false) && Keyword.get(opts, :timeout, 1_500)}
    )
    children = for i <- 0..(size - 1), do: Supervisor.child_spec({ExDb.Pool.Conn, {i, opts}}, id: {:conn, i})
    Supervisor.init(children, strategy: :one_for_one)
  end

  @doc "Waits until every slot has had its first attempt, for at most `timeout` ms."
  def await(name, timeout) do
    {size, _, _, _} = :persistent_term.get({__MODULE__, name})
    wait_slots(name, size, System.monotonic_time(:millisecond) + timeout)
  end

  defp wait_slots(name, size, deadline) do
    if not Enum.all?(0..(size - 1), &:ets.member(name, &1)) and System.monotonic_time(:millisecond) < deadline do
      Process.sleep(5)
      wait_slots(name, size, deadline)
    else
      :ok
    end
  end

  @doc """
  Runs `fun.(pid)` on the next connection. An exit (the connection died, or
  a `gen_server` call timed out) becomes `{:error, message}`; on a timeout the
  connection is killed. Every `{:error, message}` is prefixed with the pool's
  label (which driver, which database).
  """
  def run(name, fun) do
    {size, rr, label, serialize} = :persistent_term.get({__MODULE__, name})

    case pick(name, rem(:atomics.add_get(rr, 1, 1), size), size, size) do
      {:ok, pid} ->
        try do
          # A serialized pool's slot holds the slot process.
          if serialize, do: GenServer.call(pid, {:run, fun}, serialize), else: fun.(pid)
        catch
          # Waiting for the slot, then for the database: the slot's own
          # query timeout deals with a connection that stopped answering.
          :exit, {:timeout, {GenServer, :call, _}} ->
            {:error, "#{label}: no answer within #{serialize} ms"}

          :exit, {:timeout, {_, _, [_, _, ms]}} ->
            Process.exit(pid, :kill)
            {:error, "#{label}: no answer within #{ms} ms"}

          :exit, {:timeout, _} ->
            Process.exit(pid, :kill)
            {:error, "#{label}: no answer in time"}

          :exit, reason ->
            {:error, "#{label}: the connection ended (#{inspect(elem_or(reason))})"}
        else
          {:error, why} -> {:error, "#{label}: #{why}"}
          result -> result
        end

      {:error, why} ->
        {:error, "#{label}: #{why}"}
    end
  end

  defp elem_or({reason, {_m, _f, _a}}), do: reason
  defp elem_or(reason), do: reason

  defp pick(name, i, size, left) do
    case :ets.lookup(name, i) do
      [{_, pid}] when is_pid(pid) -> {:ok, pid}
      _ when left > 1 -> pick(name, rem(i + 1, size), size, left - 1)
      [{_, {:down, why}}] -> {:error, why}
      [] -> {:error, "not connected yet"}
    end
  end

  @doc "Per-connection data kept with the pool (dropped when the connection dies)."
  def conn_put(name, pid, key), do: :ets.insert(name, {{:conn, pid, key}, true})
  def conn_member?(name, pid, key), do: :ets.member(name, {:conn, pid, key})
end

defmodule ExDb.Pool.Conn do
  @moduledoc false
  # One slot of ExDb.Pool: owns one connection, reconnects it.
  use GenServer

  def start_link(arg), do: GenServer.start_link(__MODULE__, arg)

  @impl true
  def init({i, opts}) do
    Process.flag(:trap_exit, true)
    # Every slot connects at once; ExDb.Pool.await/2 waits for them.
    state = %{i: i, name: opts[:name], connect: opts[:connect], serialize: opts[:serialize], pid: nil, backoff: 100}
    {:ok, state, {:continue, :connect}}
  end

  # A serialized pool's request, run here on this slot's connection.
  @impl true
  def handle_call({:run, fun}, _from, %{pid: pid} = state) when is_pid(pid) do
    reply = fun.(pid)

    # p1_mysql's wait for a result takes the connection's 'EXIT' itself.
    if Process.alive?(pid), do: {:reply, reply, state}, else: {:reply, reply, lost(state, "the connection ended")}
  end

  def handle_call({:run, _fun}, _from, state), do: {:reply, {:error, "the connection ended"}, state}

  @impl true
  def handle_continue(:connect, state), do: {:noreply, connect(state)}

  @impl true
  def handle_info(:connect, state), do: {:noreply, connect(state)}

  def handle_info({:EXIT, pid, reason}, %{pid: pid} = state),
    do: {:noreply, lost(state, "the connection ended (#{inspect(reason)})")}

  # Exits of connections that failed to start, driver notices, late replies.
  def handle_info(_other, state), do: {:noreply, state}

  @impl true
  def terminate(_reason, %{pid: pid}) when is_pid(pid), do: Process.exit(pid, :shutdown)
  def terminate(_reason, _state), do: :ok

  defp connect(state) do
    case state.connect.() do
      {:ok, pid} ->
        Process.link(pid)
        :ets.insert(state.name, {state.i, if(state.serialize, do: self(), else: pid)})
        %{state | pid: pid, backoff: 100}

      {:error, why} ->
        down(state, why)
        Process.send_after(self(), :connect, state.backoff)
        %{state | pid: nil, backoff: min(state.backoff * 2, 1_000)}
    end
  end

  defp lost(state, why) do
    :ets.match_delete(state.name, {{:conn, state.pid, :_}, :_})
    down(state, why)
    Process.send_after(self(), :connect, 100)
    %{state | pid: nil}
  end

  defp down(state, why), do: :ets.insert(state.name, {state.i, {:down, why}})
end
