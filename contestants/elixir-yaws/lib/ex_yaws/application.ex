defmodule ExYaws.Application do
  @moduledoc """
  Boot: read the environment (`ExYaws.Config`), prepare the store (create
  its database or table: a store that does not answer stops the boot with a
  message and exit status 1), start the store's processes, then start Yaws
  embedded under this application's supervisor and give it its
  configuration, which opens the listening socket: once the port is open,
  the server answers.

  Yaws: one server on `BIND:PORT` (127.0.0.1 by default), the appmod
  `ExYaws.Web` at `/` (every path), `partial_post_size` 64 KiB, no access or
  auth log, no copy of the error log to a file (production: nothing is
  written per request), keep-alive timeout 30 s (Yaws's default), Yaws's
  default pool of 8 acceptor processes; each connection is one Erlang
  process, so requests run on every scheduler the VM has. With `TLS_CERT` and
  `TLS_KEY`, the server's `ssl` setting (Yaws's `<ssl>` block of yaws.conf):
  HTTPS on OTP's `ssl` with its defaults (TLS 1.3 and 1.2).
  """

  use Application

  @impl true
  def start(_type, _args) do
    case boot() do
      {:ok, sup} ->
        {:ok, sup}

      {:error, message} ->
        IO.puts(:stderr, "ex_yaws: " <> message)
        System.halt(1)
    end
  end

  defp boot do
    with {:ok, conf} <- ExYaws.Config.from_env(),
         mod = ExYaws.Store.module(conf.store),
         :ok <- prepare(mod, conf.store) do
      ExYaws.Store.put(mod)
      children = if mod, do: mod.children(elem(conf.store, 1)), else: []
      {:ok, sup} = Supervisor.start_link(children, strategy: :one_for_one, name: ExYaws.Supervisor)
      if mod, do: mod.started()

      with :ok <- start_yaws(sup, conf), do: {:ok, sup}
    end
  end

  defp prepare(nil, _), do: :ok
  defp prepare(mod, {_, store}), do: mod.prepare(store)

  defp start_yaws(sup, conf) do
    docroot = String.to_charlist(Application.app_dir(:ex_yaws, "priv/www"))
    id = ~c"ex_yaws"

    sconf = [
      port: conf.port,
      listen: conf.bind,
      servername: ~c"ex_yaws",
      docroot: docroot,
      appmods: [{~c"/", ExYaws.Web}],
      partial_post_size: 65_536,
      flags: [access_log: false, auth_log: false]
    ]

    sconf =
      case conf.tls do
        nil -> sconf
        files -> sconf ++ [ssl: Enum.map(files, fn {k, v} -> {k, String.to_charlist(v)} end)]
      end

    gconf = [
      id: id,
      logdir: String.to_charlist(System.tmp_dir!()),
      flags: [copy_errlog: false],
      keepalive_timeout: 30_000
    ]

    :ok = ExYaws.YawsDynopts.load()
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
