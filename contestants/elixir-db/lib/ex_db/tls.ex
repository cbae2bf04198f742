defmodule ExDb.Tls do
  @moduledoc """
  HTTPS settings from `TLS_CERT` and `TLS_KEY` (PEM files, both or neither),
  checked before Yaws starts (as in `contestants/elixir-yaws`): each file holds what its name says, and the key
  is the certificate's (it signs what the certificate's public key verifies).
  OTP's `ssl` would otherwise only find a wrong pair at each handshake, and
  the server would listen but answer no client.
  """

  @doc "`{:ok, nil}` (cleartext), `{:ok, %{certfile:, keyfile:}}`, or `{:error, message}`."
  def from_files("", ""), do: {:ok, nil}

  def from_files(cert, key) when cert == "" or key == "",
    do: {:error, "set both TLS_CERT and TLS_KEY (PEM files) to serve HTTPS, or neither"}

  def from_files(cert, key) do
    with {:ok, public} <- public_key(cert),
         {:ok, private} <- private_key(key),
         :ok <- same_pair(public, private, cert, key) do
      {:ok, %{certfile: cert, keyfile: key}}
    end
  end

  defp pem(var, path) do
    case File.read(path) do
      {:ok, text} -> {:ok, :public_key.pem_decode(text)}
      {:error, why} -> {:error, "#{var}=#{path} cannot be read: #{:file.format_error(why)}"}
    end
  end

  # The certificate's public key in the form :public_key.verify/4 takes.
  defp public_key(path) do
    with {:ok, entries} <- pem("TLS_CERT", path) do
      case for({:Certificate, der, _} <- entries, do: der) do
        [der | _] ->
          {:OTPCertificate, tbs, _, _} = :public_key.pkix_decode_cert(der, :otp)
          {:OTPSubjectPublicKeyInfo, {:PublicKeyAlgorithm, _, params}, key} = elem(tbs, 7)
          {:ok, if(match?({:ECPoint, _}, key), do: {key, params}, else: key)}

        [] ->
          {:error, "TLS_CERT=#{path} holds no PEM certificate (-----BEGIN CERTIFICATE-----)"}
      end
    end
  end

  defp private_key(path) do
    with {:ok, entries} <- pem("TLS_KEY", path) do
      case Enum.find(entries, fn {type, _, _} -> type != :Certificate end) do
        nil -> {:error, "TLS_KEY=#{path} holds no PEM private key"}
        entry -> {:ok, :public_key.pem_entry_decode(entry)}
      end
    end
  end

  defp same_pair(public, private, cert, key) do
    signed = :public_key.sign("stackbench", :sha256, private)
    if :public_key.verify("stackbench", :sha256, signed, public),
      do: :ok,
      else: {:error, "TLS_KEY=#{key} is not the key of TLS_CERT=#{cert}"}
  rescue
    e -> {:error, "TLS_KEY=#{key} cannot sign for TLS_CERT=#{cert}: #{Exception.message(e)}"}
  end
end
