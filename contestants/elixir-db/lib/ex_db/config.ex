defmodule ExDb.Config do
  @moduledoc """
  The settings of one run, read once from the environment at boot:
  `PORT` (required), `BIND` (default `127.0.0.1`), and the databases, each
  optional: `POSTGRES_URL` (`postgres://USER[:PW]@HOST:5432/DB`), `MYSQL_URL`
  (`mysql://USER[:PW]@HOST:3306/DB`, MariaDB too), `REDIS_URL`
  (`redis://[:PW@]HOST:6379/N`). The drivers of exactly the databases given
  are served. `POOL=N` sets every pool's size instead of the rules below.
  `TLS_CERT` and `TLS_KEY` (optional, both or neither): PEM files; Yaws then
  serves HTTPS (its `ssl` server setting, OTP's `ssl`; checked by `ExDb.Tls`).
  """

  defstruct [:port, :bind, :postgres, :mysql, :redis, :tls]

  def from_env do
    with {:ok, port} <- port(System.get_env("PORT")),
         {:ok, bind} <- bind(System.get_env("BIND", "127.0.0.1")),
         {:ok, pg} <- url("POSTGRES_URL", ["postgres", "postgresql"], 5432),
         {:ok, my} <- url("MYSQL_URL", ["mysql", "mariadb"], 3306),
         {:ok, redis} <- url("REDIS_URL", ["redis"], 6379),
         {:ok, tls} <- ExDb.Tls.from_files(System.get_env("TLS_CERT", ""), System.get_env("TLS_KEY", "")) do
      if pg || my || redis do
        {:ok, %__MODULE__{port: port, bind: bind, postgres: pg, mysql: my, redis: redis, tls: tls}}
      else
        {:error, "no database given: set POSTGRES_URL, MYSQL_URL and/or REDIS_URL"}
      end
    end
  end

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

  # A database URL: %{host, port, db, user, password, label}, or nil when unset.
  defp url(var, schemes, default_port) do
    case System.get_env(var, "") do
      "" ->
        {:ok, nil}

      s ->
        uri = URI.parse(s)
        {user, password} = userinfo(uri.userinfo)
        db = String.trim_leading(uri.path || "", "/")

        cond do
          uri.scheme not in schemes ->
            {:error, "#{var} must start with #{hd(schemes)}://, got #{inspect(s)}"}

          uri.host in [nil, ""] or db == "" ->
            {:error, "#{var} must name a host and a database (or Redis db number), got #{inspect(s)}"}

          true ->
            port = uri.port || default_port

            {:ok,
             %{host: uri.host, port: port, db: db, user: user, password: password, label: "#{uri.host}:#{port}/#{db}"}}
        end
    end
  end

  defp userinfo(nil), do: {"", ""}

  defp userinfo(info) do
    case String.split(info, ":", parts: 2) do
      [u, p] -> {URI.decode(u), URI.decode(p)}
      [u] -> {URI.decode(u), ""}
    end
  end

  @doc """
  The CPUs this VM may use: its online schedulers, one per CPU of its
  affinity mask (`taskset -c 0` gives 1).
  """
  def cores, do: :erlang.system_info(:schedulers_online)

  @doc """
  SQL pools: 16 connections per core, at most 30 (the Rust reference
  contestant's rule: a MySQL connection runs one statement at a time, and so
  does a p1_pgsql one, so 100 concurrent clients need many; the cap keeps
  the pools of one database under PostgreSQL's default max_connections).
  """
  def sql_pool, do: override() || min(16 * cores(), 30)

  @doc "Redis: one connection per core (eredis pipelines every request on it)."
  def redis_pool, do: override() || cores()

  defp override do
    case Integer.parse(System.get_env("POOL", "")) do
      {n, ""} when n > 0 -> n
      _ -> nil
    end
  end
end
