# The Elixir db-read contestant (HTTP by Yaws). No Hex packages: every
# library is a Debian package (see install.sh) found on the Erlang code path.
defmodule ExDb.MixProject do
  use Mix.Project

  # Mix's release takes ERTS and the OTP applications from an Erlang root
  # (its lib/<app>-<version> directories), and two Debian libraries are not
  # where that convention puts them:
  # - Yaws is in /usr/lib/yaws-<version>, outside /usr/lib/erlang;
  # - eredis (erlang-redis-client) is in /usr/lib/erlang/lib/redis_client-<v>,
  #   while /usr/lib/erlang/lib/eredis-<v> holds only its include files: Mix
  #   takes that directory for the application and finds no eredis.app.
  # So the release is built from _build/otp, a root of links: Debian's ERTS,
  # every application directory of /usr/lib/erlang/lib that has an ebin,
  # yaws-<version> and eredis-<version> (to redis_client-<version>). Yaws's
  # ebin also goes on the code path, for the compiler to find its records.
  otp = Path.join(__DIR__, "_build/otp")
  root = to_string(:code.root_dir())
  erts = "erts-#{:erlang.system_info(:version)}"

  links =
    [{Path.join(root, erts), erts}] ++
      for(
        lib <- File.ls!(Path.join(root, "lib")),
        not String.starts_with?(lib, "redis_client-"),
        File.dir?(Path.join([root, "lib", lib, "ebin"])),
        do: {Path.join([root, "lib", lib]), "lib/" <> lib}
      ) ++
      for(dir <- Path.wildcard("/usr/lib/yaws-*"), do: {dir, "lib/" <> Path.basename(dir)}) ++
      for dir <- Path.wildcard(Path.join(root, "lib/redis_client-*")),
          do: {dir, "lib/" <> String.replace_prefix(Path.basename(dir), "redis_client", "eredis")}

  for {dir, name} <- links, File.dir?(dir) do
    link = Path.join(otp, name)
    File.mkdir_p!(Path.dirname(link))
    if File.read_link(link) != {:ok, dir}, do: File.rm(link) && File.ln_s!(dir, link)
  end

  for ebin <- Path.wildcard(Path.join(otp, "lib/yaws-*/ebin")), do: Code.prepend_path(ebin)
  @erts_root Path.join(otp, erts)

  def project do
    [
      app: :ex_db,
      version: "0.1.0",
      elixir: "~> 1.14",
      start_permanent: true,
      deps: [],
      releases: [
        ex_db: [
          # Self-contained: Debian's ERTS and the OTP and Debian applications
          # (Yaws, jiffy, p1_pgsql, p1_mysql, eredis) are copied in, from
          # _build/otp (above).
          include_erts: @erts_root,
          include_executables_for: [:unix],
          strip_beams: true
        ]
      ]
    ]
  end

  def application do
    [
      mod: {ExDb.Application, []},
      # Yaws runs embedded: loaded, its processes started under our supervisor.
      included_applications: [:yaws],
      # ssl: Yaws's HTTPS (TLS_CERT, TLS_KEY), started with the rest so a TLS run pays no boot of its own.
      extra_applications: [:logger, :crypto, :ssl, :jiffy, :p1_pgsql, :p1_mysql, :eredis]
    ]
  end
end
