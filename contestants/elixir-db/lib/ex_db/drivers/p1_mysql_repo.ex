defmodule ExDb.Drivers.P1MysqlRepo do
  @moduledoc """
  `p1-mysql-repo`: the layer over p1_mysql, `ExDb.Repo` with its MySQL
  adapter (the original experiment's Ecto row; Ecto is on Hex), on a pool of
  its own:

      ExDb.Item |> Query.from() |> Query.where_in(:id, [a, b]) |> Query.order_by(:id) |> ExDb.Repo.all(repo)

  builds ``SELECT s0.`id`, s0.`name`, s0.`price` FROM `items` AS s0 WHERE
  (s0.`id` IN (A,B)) ORDER BY s0.`id` `` (values as literals: p1_mysql has
  no prepared statements) and loads `%ExDb.Item{}` structs.
  """

  @behaviour ExDb.Driver
  @pool :ex_db_p1_mysql_repo
  alias ExDb.Repo.Query

  @impl true
  def name, do: "p1-mysql-repo"
  @impl true
  def database, do: "MySQL/MariaDB"
  @impl true
  def layer,
    do: "ExDb.Repo (schema, query built per request, rows loaded into structs; Ecto stand-in) over p1_mysql"

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
  def fetch(ids) do
    repo = %ExDb.Repo{adapter: ExDb.Repo.MySQL, pool: @pool, timeout: ExDb.Driver.timeout()}

    case ExDb.Item |> Query.from() |> Query.where_in(:id, ids) |> Query.order_by(:id) |> ExDb.Repo.all(repo) do
      {:ok, items} -> {:ok, for(%ExDb.Item{id: id, name: n, price: p} <- items, do: {id, n, p})}
      {:error, why} -> {:error, why}
    end
  end
end
