defmodule ExDb.Drivers.Eredis do
  @moduledoc """
  `eredis`: Redis through eredis (Debian's erlang-redis-client), the two
  hashes `item:A` and `item:B` read with one pipeline of two `HGETALL`
  (`eredis:qp/3`). eredis sends every request at once on its connection and
  matches the answers in order, so one connection per core is enough. Its own
  reconnecting is off (`no_reconnect`): the pool replaces a connection that
  ended, as for the SQL drivers.
  """

  @behaviour ExDb.Driver
  @pool :ex_db_eredis

  @impl true
  def name, do: "eredis"
  @impl true
  def database, do: "Redis"
  @impl true
  def layer, do: "eredis 1.2, one pipeline of two HGETALL (eredis:qp)"
  @impl true
  def pool, do: "#{ExDb.Config.redis_pool()} pipelined connection(s)"

  @impl true
  def children(r) do
    db =
      case Integer.parse(r.db) do
        {n, ""} -> n
        _ -> 0
      end

    [
      {ExDb.Pool,
       name: @pool,
       size: ExDb.Config.redis_pool(),
       label: "#{name()} cannot read from Redis at #{r.label}",
       connect: fn ->
         case :eredis.start_link(String.to_charlist(r.host), r.port, db, String.to_charlist(r.password), :no_reconnect, 1_000) do
           {:ok, pid} -> {:ok, pid}
           {:error, reason} -> {:error, "cannot connect (#{inspect(reason)})"}
         end
       end}
    ]
  end

  @impl true
  def fetch([a, b]) do
    ExDb.Pool.run(@pool, fn pid ->
      case :eredis.qp(pid, [["HGETALL", "item:#{a}"], ["HGETALL", "item:#{b}"]], ExDb.Driver.timeout()) do
        [{:ok, ra}, {:ok, rb}] -> {:ok, row(a, ra) ++ row(b, rb)}
        [{:error, e} | _] -> {:error, e}
        [_, {:error, e}] -> {:error, e}
        {:error, e} -> {:error, inspect(e)}
      end
    end)
  end

  # HGETALL answers [field, value, ...]; [] when there is no such hash.
  defp row(_id, []), do: []

  defp row(id, fields) do
    m = fields |> Enum.chunk_every(2) |> Map.new(fn [k, v] -> {k, v} end)
    [{id, Map.fetch!(m, "name"), String.to_integer(Map.fetch!(m, "price"))}]
  end
end
