defmodule ExYaws.Store.Postgres do
  @moduledoc """
  PostgreSQL through p1_pgsql (Debian's erlang-p1-pgsql, ProcessOne's pure
  Erlang driver) and the pool of `ExYaws.PgPool`, sized by
  `ExYaws.Config.pool_size/0` (4 connections per scheduler online, at least 8).

  Table (created at boot when missing): `id BIGINT GENERATED ALWAYS AS
  IDENTITY PRIMARY KEY, kind TEXT, source TEXT, value DOUBLE PRECISION,
  ts_ms BIGINT`, like the Rust reference contestant's.

  An event is one prepared statement (prepared once per connection),
  `WITH ins AS (INSERT ... VALUES ($1, $2, $3, $4)) SELECT COUNT(*) + 1 FROM t`:
  the write and the count of all events in one statement. The sub-statements
  of a `WITH` see the snapshot taken before the statement, so `COUNT(*)` does
  not see the row being inserted and `+ 1` adds it. It is acknowledged once
  committed (autocommit; with PostgreSQL's default `synchronous_commit=on`
  the commit's WAL is fsynced first). p1_pgsql's `execute` takes two round
  trips (Bind/Describe/Execute/Flush, then Close/Sync): that is the driver's
  cost, left as it is.
  """

  @behaviour ExYaws.Store
  @pool :ex_yaws_pg

  @impl true
  def prepare(conf) do
    with {:ok, pid} <- one_off(conf) do
      result = ExYaws.PgPool.squery(pid, create_table(conf.table))
      :pgsql.terminate(pid)
      with {:error, why} <- result, do: {:error, "#{label(conf)}: #{why}"}
    end
  end

  @impl true
  def children(conf) do
    t = conf.table

    [
      {ExYaws.PgPool,
       name: @pool,
       size: ExYaws.Config.pool_size(),
       label: label(conf),
       connect: connect_opts(conf),
       prepare: [
         {~c"ex_append",
          String.to_charlist(
            "WITH ins AS (INSERT INTO #{t} (kind, source, value, ts_ms) VALUES ($1, $2, $3, $4)) " <>
              "SELECT COUNT(*) + 1 FROM #{t}"
          )},
         {~c"ex_count", String.to_charlist("SELECT COUNT(*) FROM #{t}")}
       ]}
    ]
  end

  # The server listens once every connection has had its first try.
  @impl true
  def started, do: ExYaws.PgPool.await(@pool, 5_000)

  @impl true
  def append({type, source, value, ts}) do
    # p1_pgsql sends binaries in binary format (right for TEXT), integers and
    # charlists in text format: the float goes as its shortest exact text.
    params = [type, source, :erlang.float_to_list(value, [:short]), ts]
    ExYaws.PgPool.execute(@pool, ~c"ex_append", params) |> one_count()
  end

  @impl true
  def count, do: ExYaws.PgPool.execute(@pool, ~c"ex_count", []) |> one_count()

  defp one_count({:ok, [[{_type, n}]]}), do: {:ok, String.to_integer(n)}
  defp one_count({:ok, rows}), do: {:error, "PostgreSQL answered #{inspect(rows)} for a count"}
  defp one_count(error), do: error

  @impl true
  def reset(conf) do
    with {:ok, pid} <- one_off(conf) do
      result = ExYaws.PgPool.squery(pid, create_table(conf.table) <> "; TRUNCATE #{conf.table}")
      :pgsql.terminate(pid)
      with {:error, why} <- result, do: {:error, "#{label(conf)}: #{why}"}
    end
  end

  defp create_table(t) do
    "CREATE TABLE IF NOT EXISTS #{t} (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, " <>
      "kind TEXT NOT NULL, source TEXT NOT NULL, value DOUBLE PRECISION NOT NULL, ts_ms BIGINT NOT NULL)"
  end

  defp one_off(conf) do
    case ExYaws.PgPool.connect(connect_opts(conf)) do
      {:ok, pid} -> {:ok, pid}
      {:error, reason} -> {:error, "#{label(conf)}: #{ExYaws.PgPool.connect_error(reason)} (is it running? check STORE)"}
    end
  end

  defp connect_opts(conf) do
    [
      host: String.to_charlist(conf.host),
      port: conf.port,
      database: String.to_charlist(conf.db),
      user: String.to_charlist(conf.user),
      password: String.to_charlist(conf.password),
      connect_timeout: 2_000,
      as_binary: true
    ]
  end

  defp label(conf), do: "PostgreSQL at #{conf.host}:#{conf.port}/#{conf.db} (table #{conf.table})"
end
