defmodule ExDb.Driver do
  @moduledoc """
  One driver name under `/db/<name>`. A driver module gives its `name/0`,
  `database/0`, `layer/0` (what stands between the request and the database,
  in words), `pool/0` (its size, in words), `children/1` (its pool, started
  under the application's supervisor, from its database's settings) and
  `fetch/1`: the rows of two ids (`lo <= hi`, possibly equal) in one round
  trip, as `{:ok, [{id, name, price}]}` (an id without a row is absent) or
  `{:error, message}` (a 503).
  """

  @callback name() :: String.t()
  @callback database() :: String.t()
  @callback layer() :: String.t()
  @callback pool() :: String.t()
  @callback children(map()) :: [Supervisor.child_spec()]
  @callback fetch([pos_integer()]) :: {:ok, [{integer(), binary(), integer()}]} | {:error, String.t()}

  # Every driver of this contestant, in the order GET /db lists them, with the
  # database setting that serves it.
  @all [
    {ExDb.Drivers.P1Pgsql, :postgres, "POSTGRES_URL"},
    {ExDb.Drivers.P1PgsqlRepo, :postgres, "POSTGRES_URL"},
    {ExDb.Drivers.P1Mysql, :mysql, "MYSQL_URL"},
    {ExDb.Drivers.P1MysqlRepo, :mysql, "MYSQL_URL"},
    {ExDb.Drivers.Eredis, :redis, "REDIS_URL"}
  ]

  @doc "`{module, settings}` of the drivers whose database `config` gives."
  def served(config) do
    for {mod, key, _} <- @all, conf = Map.fetch!(config, key), do: {mod, conf}
  end

  @doc "Every driver name, and the setting that serves it."
  def all, do: for({mod, _, var} <- @all, do: {mod.name(), var})

  @doc "How long a request waits for its database before a 503."
  def timeout, do: 1_500
end
