defmodule ExYaws.Config do
  @moduledoc """
  The settings of one run, read once from the environment at boot.

  - `SCENARIO`: `dummy` or `event-log` (run.sh's first argument).
  - `PORT` (required) and `BIND` (default `127.0.0.1`).
  - `STORE` (event-log): `influxdb://HOST:PORT/DB` (measurement `events`) or
    `postgres://USER[:PASSWORD]@HOST:PORT/DB[?table=NAME]` (default table
    `ex_yaws_events`).
  - `POOL` (optional): connections to the store, instead of the rule in
    `pool_size/0`.
  - `TLS_CERT` and `TLS_KEY` (optional, both or neither): PEM files; Yaws then
    serves HTTPS (its `ssl` server setting, OTP's `ssl`; checked by `ExYaws.Tls`).
  """

  defstruct [:scenario, :port, :bind, :store, :tls]

  @default_table "ex_yaws_events"

  @doc "The configuration, or `{:error, message}` naming what is wrong."
  def from_env do
    with {:ok, scenario} <- scenario(System.get_env("SCENARIO", "dummy")),
         {:ok, port} <- port(System.get_env("PORT")),
         {:ok, bind} <- bind(System.get_env("BIND", "127.0.0.1")),
         {:ok, store} <- store(scenario, System.get_env("STORE")),
         {:ok, tls} <- ExYaws.Tls.from_files(System.get_env("TLS_CERT", ""), System.get_env("TLS_KEY", "")) do
      {:ok, %__MODULE__{scenario: scenario, port: port, bind: bind, store: store, tls: tls}}
    end
  end

  defp scenario("dummy"), do: {:ok, :dummy}
  defp scenario("event-log"), do: {:ok, :event_log}
  defp scenario(other), do: {:error, "SCENARIO must be dummy or event-log, got #{inspect(other)}"}

  defp port(nil), do: {:error, "PORT is not set; give the port to listen on, e.g. PORT=8080"}

  defp port(s) do
    case Integer.parse(s) do
      {p, ""} when p in 1..65535 -> {:ok, p}
      _ -> {:error, "PORT must be a port number from 1 to 65535, got #{inspect(s)}"}
    end
  end

  defp bind(s) do
    case :inet.parse_address(String.to_charlist(s)) do
      {:ok, ip} -> {:ok, ip}
      _ -> {:error, "BIND must be an IP address, got #{inspect(s)}"}
    end
  end

  @doc "Parses a store URL (also used by the reset command)."
  def store(:dummy, _), do: {:ok, nil}

  def store(:event_log, nil),
    do: {:error, "STORE is not set; give influxdb://HOST:8086/DB or postgres://USER@HOST:5432/DB"}

  def store(:event_log, url) do
    uri = URI.parse(url)
    query = URI.decode_query(uri.query || "")
    db = String.trim_leading(uri.path || "", "/")

    cond do
      uri.host in [nil, ""] or db == "" ->
        {:error, "STORE must name a host and a database, like influxdb://127.0.0.1:8086/mydb, got #{inspect(url)}"}

      uri.scheme == "influxdb" ->
        {:ok, {:influxdb, %{host: uri.host, port: uri.port || 8086, db: db}}}

      uri.scheme in ["postgres", "postgresql"] ->
        {user, password} = userinfo(uri.userinfo)
        table = Map.get(query, "table", @default_table)

        if table =~ ~r/\A[a-z_][a-z0-9_]{0,62}\z/ do
          {:ok,
           {:postgres,
            %{host: uri.host, port: uri.port || 5432, db: db, user: user, password: password, table: table}}}
        else
          {:error, "table=#{inspect(table)} must be a plain lower-case SQL name ([a-z_][a-z0-9_]*)"}
        end

      true ->
        {:error, "STORE must start with influxdb:// or postgres://, got #{inspect(url)}"}
    end
  end

  defp userinfo(nil), do: {"postgres", ""}

  defp userinfo(info) do
    case String.split(info, ":", parts: 2) do
      [u, p] -> {URI.decode(u), URI.decode(p)}
      [u] -> {URI.decode(u), ""}
    end
  end

  @doc """
  Store connections: four per scheduler online (the CPUs this VM may run on,
  which honours the affinity mask: `taskset -c 0` gives one), at least eight
  so that concurrent writes reach the store together (PostgreSQL's group
  commit). The rule of the Rust reference contestant. `POOL=N` overrides it.
  """
  def pool_size do
    case Integer.parse(System.get_env("POOL", "")) do
      {n, ""} when n > 0 -> n
      _ -> max(4 * :erlang.system_info(:schedulers_online), 8)
    end
  end
end
