defmodule ExYaws.Store do
  @moduledoc """
  Where events go. `dummy` has no store: every event counts as 1. For
  `event-log` the store module (`ExYaws.Store.Influx` or
  `ExYaws.Store.Postgres`) is chosen once at boot and kept in
  `:persistent_term`, so a request reads it without a lookup in a process.

  A store module gives `prepare/1` (run once at boot, before anything
  listens: create the database or table, check that the store answers),
  `children/1` (its processes, started under the application's supervisor),
  `started/0` (waits, briefly, until those processes are ready), `append/1` (write one event, then count:
  `{:ok, count}`, `{:error, {:unstorable, message}}` for an event the store
  cannot hold, `{:error, message}` when the store is unreachable or failing),
  `count/0` and `reset/1` (empty the store: the plan's reset command).
  """

  @key {__MODULE__, :module}

  @callback prepare(map()) :: :ok | {:error, String.t()}
  @callback children(map()) :: [Supervisor.child_spec()]
  @callback started() :: :ok
  @callback append({String.t(), String.t(), float(), non_neg_integer()}) ::
              {:ok, non_neg_integer()} | {:error, String.t() | {:unstorable, String.t()}}
  @callback count() :: {:ok, non_neg_integer()} | {:error, String.t()}
  @callback reset(map()) :: :ok | {:error, String.t()}

  def module(nil), do: nil
  def module({:influxdb, _}), do: ExYaws.Store.Influx
  def module({:postgres, _}), do: ExYaws.Store.Postgres

  def put(module), do: :persistent_term.put(@key, module)

  def append(event) do
    case :persistent_term.get(@key) do
      nil -> {:ok, 1}
      mod -> mod.append(event)
    end
  end

  def count do
    case :persistent_term.get(@key) do
      nil -> {:ok, 1}
      mod -> mod.count()
    end
  end
end
