defmodule ExDb.Drivers.P1Mysql do
  @moduledoc """
  `p1-mysql`: the raw driver. p1_mysql (ProcessOne's pure-Erlang MySQL
  driver, Debian's erlang-p1-mysql) speaks the text protocol only, so the
  query is text with the two ids in it, `SELECT id, name, price FROM items
  WHERE id IN (A, B)`: they are integers checked to be in 1..2^31-1 before
  (nothing else can reach the SQL), as ejabberd builds its p1_mysql queries.
  """

  @behaviour ExDb.Driver
  @pool :ex_db_p1_mysql

  @impl true
  def name, do: "p1-mysql"
  @impl true
  def database, do: "MySQL/MariaDB"
  @impl true
  def layer, do: "raw driver (p1_mysql 1.0), text query (the driver has no prepared statements)"
  @impl true
  def pool, do: "#{ExDb.Config.sql_pool()} connections"

  @impl true
  def children(my) do
    [
      {ExDb.Pool,
       name: @pool,
       size: ExDb.Config.sql_pool(),
       label: "#{name()} cannot read from MySQL/MariaDB at #{my.label}",
       connect: fn -> ExDb.Mysql.connect(my) end,
       serialize: true,
       timeout: ExDb.Driver.timeout()}
    ]
  end

  @impl true
  def fetch([a, b]) when is_integer(a) and is_integer(b) do
    sql = ["SELECT id, name, price FROM items WHERE id IN (", Integer.to_string(a), ", ", Integer.to_string(b), ")"]

    ExDb.Pool.run(@pool, fn pid ->
      case ExDb.Mysql.query(pid, IO.iodata_to_binary(sql), ExDb.Driver.timeout()) do
        {:ok, rows} -> {:ok, for([id, n, p] <- rows, do: {String.to_integer(id), n, String.to_integer(p)})}
        {:error, why} -> {:error, why}
      end
    end)
  end
end
