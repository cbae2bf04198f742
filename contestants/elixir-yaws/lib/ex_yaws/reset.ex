defmodule ExYaws.Reset do
  @moduledoc """
  Empties the store named by `STORE` (the plan's `reset` command, through
  `reset.sh`): InfluxDB `DROP MEASUREMENT events` (the database is created
  when missing), PostgreSQL `TRUNCATE` (the table is created when missing).
  Runs in a VM of its own (`bin/ex_yaws eval`), where no application is
  started: it starts the few it needs.
  """

  def main do
    {:ok, _} = Application.ensure_all_started(:inets)
    {:ok, _} = Application.ensure_all_started(:crypto)

    result =
      with {:ok, {_, conf} = store} <- ExYaws.Config.store(:event_log, System.get_env("STORE")) do
        ExYaws.Store.module(store).reset(conf)
      end

    case result do
      :ok ->
        :ok

      {:error, message} ->
        IO.puts(:stderr, "reset: " <> message)
        System.halt(1)
    end
  end
end
