defmodule ExDb.Drivers.P1Pgsql do
  @moduledoc """
  `p1-pgsql`: the raw driver. p1_pgsql (ProcessOne's pure-Erlang PostgreSQL
  driver, Debian's erlang-p1-pgsql), one statement prepared on every
  connection when it connects, `SELECT id, name, price FROM items WHERE id IN
  ($1, $2)`, executed with the two ids. p1_pgsql's `execute` takes two round
  trips (Bind/Describe/Execute/Flush, then Close/Sync): the driver's cost.
  """

  @behaviour ExDb.Driver
  @pool :ex_db_p1_pgsql
  @stmt ~c"ex_items"

  @impl true
  def name, do: "p1-pgsql"
  @impl true
  def database, do: "PostgreSQL"
  @impl true
  def layer, do: "raw driver (p1_pgsql 1.1), statement prepared once per connection"
  @impl true
  def pool, do: "#{ExDb.Config.sql_pool()} connections"

  @impl true
  def children(pg) do
    sql = ~c"SELECT id, name, price FROM items WHERE id IN ($1, $2)"

    [
      {ExDb.Pool,
       name: @pool,
       size: ExDb.Config.sql_pool(),
       label: "#{name()} cannot read from PostgreSQL at #{pg.label}",
       connect: fn -> ExDb.Pg.connect(pg, [{@stmt, sql}]) end}
    ]
  end

  @impl true
  def fetch([a, b]) do
    ExDb.Pool.run(@pool, fn pid ->
      case ExDb.Pg.execute(pid, @stmt, [a, b], ExDb.Driver.timeout()) do
        # Columns come tagged with their type, integers as decimal text.
        {:ok, {_command, rows}} ->
          {:ok, for([{_, id}, {_, n}, {_, p}] <- rows, do: {String.to_integer(id), n, String.to_integer(p)})}

        {:error, desc} ->
          {:error, ExDb.Pg.message(desc)}
      end
    end)
  end
end
