defmodule ExDb.Application do
  @moduledoc """
  Boot: read the environment (`ExDb.Config`), start the pools of the drivers
  whose database is given (every connection is opened at once; the boot
  waits for each slot's first attempt, at most 5 s), publish the drivers to
  `ExDb.Web`, then start Yaws embedded under this application's supervisor.

  A database that cannot be reached at boot does not stop the server: its
  drivers answer 503 (the reason is logged once here) and their pools keep
  trying, so the drivers serve as soon as it is back.

  Yaws: as in `contestants/elixir-yaws` (one server on `BIND:PORT`, the
  appmod `ExDb.Web` at `/`, no access or auth log, no copy of the error log
  to a file, keep-alive timeout 30 s, 8 acceptor processes); HTTPS on OTP's
  `ssl` with its defaults (TLS 1.3 and 1.2) when `TLS_CERT` and `TLS_KEY` are given.
  """

  use Application
  require Logger

  @impl true
  def start(_type, _args) do
    case boot() do
      {:ok, sup} ->
        {:ok, sup}

      {:error, message} ->
        IO.puts(:stderr, "ex_db: " <> message)
        System.halt(1)
    end
  end

  defp boot do
    with {:ok, conf} <- ExDb.Config.from_env() do
      served = ExDb.Driver.served(conf)
      children = Enum.flat_map(served, fn {mod, db} -> mod.children(db) end)
      specs = for {ExDb.Pool, opts} = c <- children, do: Supervisor.child_spec(c, id: opts[:name])
      {:ok, sup} = Supervisor.start_link(specs, strategy: :one_for_one, name: ExDb.Supervisor)

      for {ExDb.Pool, opts} <- children do
        ExDb.Pool.await(opts[:name], 5_000)

        case :ets.lookup(opts[:name], 0) do
          [{0, {:down, why}}] -> Logger.warning("#{opts[:label]}: #{why}; answering 503 until it can")
          _ -> :ok
        end
      end

      ExDb.Web.serve(Enum.map(served, &elem(&1, 0)))
      with :ok <- start_yaws(sup, conf), do: {:ok, sup}
    end
  end

  defp start_yaws(sup, conf) do
    docroot = String.to_charlist(Application.app_dir(:ex_db, "priv/www"))
    id = ~c"ex_db"

    sconf = [
      port: conf.port,
      listen: conf.bind,
      servername: ~c"ex_db",
      docroot: docroot,
      appmods: [{~c"/", ExDb.Web}],
      flags: [access_log: false, auth_log: false]
    ]

    # HTTPS with TLS_CERT and TLS_KEY: Yaws's `ssl` server setting (its yaws.conf `<ssl>` block).
    sconf =
      case conf.tls do
        nil -> sconf
        files -> sconf ++ [ssl: Enum.map(files, fn {k, v} -> {k, String.to_charlist(v)} end)]
      end

    gconf = [id: id, logdir: String.to_charlist(System.tmp_dir!()), flags: [copy_errlog: false], keepalive_timeout: 30_000]

    :ok = ExDb.YawsDynopts.load()
    {:ok, sconfs, gc, specs} = :yaws_api.embedded_start_conf(docroot, sconf, gconf, id)
    for spec <- specs, do: {:ok, _} = Supervisor.start_child(sup, spec)

    # A port that cannot be bound makes yaws_server exit (badbind).
    try do
      :yaws_api.setconf(gc, sconfs)
    catch
      :exit, _ -> {:error, "Yaws cannot listen on #{:inet.ntoa(conf.bind)}:#{conf.port}: is the port in use?"}
    else
      :ok -> :ok
      other -> {:error, "Yaws cannot serve on port #{conf.port}: #{inspect(other)}"}
    end
  end
end
