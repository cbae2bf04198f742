import Config

# Production: warnings and errors only, nothing per request.
config :logger, level: :warning, handle_sasl_reports: false
