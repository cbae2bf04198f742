defmodule ExDb.Drivers.P1PgsqlRepo do
  @moduledoc """
  `p1-pgsql-repo`: the layer over p1_pgsql, `ExDb.Repo` with its Postgres
  adapter (the original experiment's Ecto row; Ecto is on Hex), on a pool of
  its own:

      ExDb.Item |> Query.from() |> Query.where_in(:id, [a, b]) |> Query.order_by(:id) |> ExDb.Repo.all(repo)

  builds `SELECT s0."id", s0."name", s0."price" FROM "items" AS s0 WHERE
  (s0."id" = ANY($1)) ORDER BY s0."id"` with the ids as one array
  parameter, runs it as a statement prepared on that connection's first use,
  and loads `%ExDb.Item{}` structs.
  """

  @behaviour ExDb.Driver
  @pool :ex_db_p1_pgsql_repo
  alias ExDb.Repo.Query

  @impl true
  def name, do: "p1-pgsql-repo"
  @impl true
  def database, do: "PostgreSQL"
  @impl true
  def layer,
    do: "ExDb.Repo (schema, query built per request, rows loaded into structs; Ecto stand-in) over p1_pgsql"

  @impl true
  def pool, do: "#{ExDb.Config.sql_pool()} connections"

  @impl true
  def children(pg) do
    [
      {ExDb.Pool,
       name: @pool,
       size: ExDb.Config.sql_pool(),
       label: "#{name()} cannot read from PostgreSQL at #{pg.label}",
       connect: fn -> ExDb.Pg.connect(pg, []) end}
    ]
  end

  @impl true
  def fetch(ids) do
    repo = %ExDb.Repo{adapter: ExDb.Repo.Postgres, pool: @pool, timeout: ExDb.Driver.timeout()}

    case ExDb.Item |> Query.from() |> Query.where_in(:id, ids) |> Query.order_by(:id) |> ExDb.Repo.all(repo) do
      {:ok, items} -> {:ok, for(%ExDb.Item{id: id, name: n, price: p} <- items, do: {id, n, p})}
      {:error, why} -> {:error, why}
    end
  end
end
