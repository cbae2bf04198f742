# The Elixir contestant on Yaws. No Hex packages: every library is a Debian
# package (see install.sh) found on the Erlang code path.
defmodule ExYaws.MixProject do
  use Mix.Project

  # Debian installs Yaws in /usr/lib/yaws-<version>, outside Erlang's own lib
  # directory (where jiffy and p1_pgsql are). A link to it in _build/debian/
  # puts it on the code path, so that the compiler finds its records and the
  # release copies it, under a directory of its own: the release's boot
  # script names each non-OTP application's parent directory $RELEASE_LIB,
  # and /usr/lib would also match /usr/lib/erlang/lib (the boot then fails).
  debian = Path.join(__DIR__, "_build/debian")

  for dir <- Path.wildcard("/usr/lib/yaws-*"), File.dir?(Path.join(dir, "ebin")) do
    link = Path.join(debian, Path.basename(dir))
    File.mkdir_p!(debian)
    if File.read_link(link) != {:ok, dir}, do: File.rm(link) && File.ln_s!(dir, link)
    Code.prepend_path(Path.join(link, "ebin"))
  end

  def project do
    [
      app: :ex_yaws,
      version: "0.1.0",
      elixir: "~> 1.14",
      start_permanent: true,
      deps: [],
      releases: [
        ex_yaws: [
          # Self-contained: Debian's ERTS and the OTP and Debian applications
          # (jiffy, p1_pgsql) are copied in.
          include_erts: true,
          include_executables_for: [:unix],
          strip_beams: true
        ]
      ]
    ]
  end

  def application do
    [
      mod: {ExYaws.Application, []},
      # Yaws runs embedded: loaded, its processes started under our supervisor.
      included_applications: [:yaws],
      # ssl: Yaws's HTTPS (TLS_CERT, TLS_KEY), started with the rest so a TLS run pays no boot of its own.
      extra_applications: [:logger, :inets, :crypto, :ssl, :jiffy, :p1_pgsql]
    ]
  end
end
