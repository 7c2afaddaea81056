"""A JAAS login file (Java's ``-Djava.security.auth.login.config=<file>``), the pure part: the file's sections (Sun's
ConfigFile syntax, ``Name { <module> <flag> <key>=<value>... ; ... };``), the JVM system properties a Kafka script
passes in ``KAFKA_OPTS``, and the ZooKeeper client's SASL login they make (ZooKeeper's ``Client`` section, or the one
``-Dzookeeper.sasl.clientconfig`` names, read as ZooKeeperSaslClient reads it: a DigestLoginModule's
``username`` / ``password``, SASL DIGEST-MD5).

Reading the file is the caller's (kactor/config.py for a broker, kactor/admin/zk_session.py for a tool): here only
text. The entries' grammar and tokens are core/security/sasl.py's (Kafka's JaasConfig parses the same entries).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping

import attrs

from core.security.sasl import _EOF, _QUOTED, _WORD, JaasEntry, _tokens

JAVA_LOGIN_CONFIG_PARAM = "java.security.auth.login.config"  # JaasUtils.JAVA_LOGIN_CONFIG_PARAM
ZK_SASL_CLIENT = "zookeeper.sasl.client"  # JaasUtils.ZK_SASL_CLIENT (default true)
ZK_LOGIN_CONTEXT_NAME_KEY = "zookeeper.sasl.clientconfig"  # JaasUtils.ZK_LOGIN_CONTEXT_NAME_KEY
ZK_LOGIN_CONTEXT_DEFAULT = "Client"  # ZKClientConfig.LOGIN_CONTEXT_NAME_KEY_DEFAULT
KAFKA_OPTS = "KAFKA_OPTS"  # kafka-run-class.sh's JVM options: where Kafka's scripts take -D system properties
DIGEST_LOGIN_MODULE = "org.apache.zookeeper.server.auth.DigestLoginModule"
KRB5_LOGIN_MODULE = "com.sun.security.auth.module.Krb5LoginModule"
DIGEST_MD5 = "DIGEST-MD5"
_FLAGS = ("REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL")


class JaasFileError(ValueError):
    """A JAAS file that cannot give a ZooKeeper login: one line saying what and where."""


@attrs.frozen(slots=True)
class ZkSaslLogin:
    """The ZooKeeper client's SASL login: DIGEST-MD5 as ``username`` with ``password``, from JAAS section
    ``section`` of ``path``. ZooKeeper's SASLAuthenticationProvider makes the session's identity ``sasl:<username>``,
    the id CREATOR_ALL_ACL gives every right to."""

    username: str
    password: str = attrs.field(repr=False)  # a secret
    section: str = ZK_LOGIN_CONTEXT_DEFAULT
    path: str = ""

    @property
    def acl_id(self) -> tuple[str, str]:
        """The (scheme, id) ZooKeeper stores for this login in a CREATOR_ALL ACL."""
        return ("sasl", self.username)

    def kazoo_sasl_options(self) -> dict[str, str]:
        """KazooClient's ``sasl_options`` (pure-sasl's DIGEST-MD5, the mechanism ZooKeeper's client uses for a
        DigestLoginModule). A new dict each time: kazoo adds its ``service`` to the one it is given."""
        return {"mechanism": DIGEST_MD5, "username": self.username, "password": self.password}


def java_system_properties(jvm_options: str) -> dict[str, str]:
    """The ``-D<key>=<value>`` system properties in a JVM command line such as ``KAFKA_OPTS`` (split as the shell
    splits kafka-run-class.sh's unquoted ``$KAFKA_OPTS``, quotes honoured); ``-Dkey`` alone is ``""`` as in Java; a
    later one wins, as the JVM's does."""
    try:
        words = shlex.split(jvm_options)
    except ValueError as e:
        raise JaasFileError(f"{KAFKA_OPTS} cannot be split into JVM options: {e}") from None
    props: dict[str, str] = {}
    for word in words:
        if word.startswith("-D") and len(word) > 2:
            key, _, value = word[2:].partition("=")
            props[key] = value
    return props


def _file_tokens(text: str) -> list[tuple[str, str]]:
    """JaasConfig's tokens (sasl._tokens) with ``{`` and ``}`` as tokens of their own, as ConfigFile's tokenizer
    has them (a section's braces may touch its name or the closing ``;``)."""
    out: list[tuple[str, str]] = []
    for kind, value in _tokens(text):
        if kind != _WORD or ("{" not in value and "}" not in value):
            out.append((kind, value))
            continue
        word = ""
        for ch in value:
            if ch in "{}":
                if word:
                    out.append((_WORD, word))
                    word = ""
                out.append((ch, ch))
            else:
                word += ch
        if word:
            out.append((_WORD, word))
    return out + [(_EOF, "")]


def parse_jaas_file(text: str) -> dict[str, tuple[JaasEntry, ...]]:
    """sun.security.provider.ConfigFile: each section's login modules, by section name. JaasFileError for what
    ConfigFile refuses (a missing brace or ``;``, an unknown control flag, a section given twice)."""
    tokens = _file_tokens(text)
    pos = 0

    def take() -> tuple[str, str]:
        nonlocal pos
        token = tokens[pos]
        pos = min(pos + 1, len(tokens) - 1)
        return token

    sections: dict[str, tuple[JaasEntry, ...]] = {}
    while (token := take())[0] != _EOF:
        if token[0] not in (_WORD, _QUOTED):
            raise JaasFileError(f"expected a section name, found [{token[1]}]")
        name = token[1]
        if name in sections:
            raise JaasFileError(f"Can not specify multiple entries for {name}")
        if take()[0] != "{":
            raise JaasFileError(f"section {name}: expected [{{]")
        entries: list[JaasEntry] = []
        while (token := take())[0] != "}":
            if token[0] not in (_WORD, _QUOTED):
                raise JaasFileError(f"section {name}: expected a login module or [}}], found [{token[1] or 'end'}]")
            module = token[1]
            kind, flag = take()
            if kind not in (_WORD, _QUOTED) or flag.upper() not in _FLAGS:
                raise JaasFileError(f"section {name}: invalid control flag [{flag}] for {module}")
            options: dict[str, str] = {}
            while (token := take())[0] not in (";", "}", _EOF):
                key = token[1]
                if take()[0] != "=" or (value := take())[0] not in (_WORD, _QUOTED):
                    raise JaasFileError(f"section {name}: no value for option [{key}] of {module}")
                options[key] = value[1]
            if token[0] != ";":
                raise JaasFileError(f"section {name}: expected [;] after the options of {module}")
            entries.append(JaasEntry(module, flag.upper(), options))
        if take()[0] != ";":
            raise JaasFileError(f"section {name}: expected [;] after its [}}]")
        sections[name] = tuple(entries)
    return sections


def zk_client_login(text: str, section: str = ZK_LOGIN_CONTEXT_DEFAULT, path: str = "") -> ZkSaslLogin | None:
    """The ZooKeeper client's login from JAAS file text (ZooKeeperSaslClient with a DigestLoginModule: its
    ``username`` and ``password`` options, mechanism DIGEST-MD5). None when the file has no such section: ZooKeeper's
    client then does no SASL, and Kafka's JaasUtils.isZkSecurityEnabled is false. JaasFileError for a section
    kactor cannot log in with: Kerberos (Krb5LoginModule, GSSAPI), another module, or no username or password."""
    where = f"JAAS file {path}" if path else "JAAS file"
    try:
        sections = parse_jaas_file(text)
    except JaasFileError as e:
        raise JaasFileError(f"{where}: {e}") from None
    entries = sections.get(section)
    if entries is None:
        return None
    for entry in entries:
        if entry.login_module == KRB5_LOGIN_MODULE:
            raise JaasFileError(f"{where}, section {section}: {KRB5_LOGIN_MODULE} (Kerberos, SASL GSSAPI) is not "
                                f"supported: kactor logs in to ZooKeeper with SASL DIGEST-MD5 only "
                                f"({DIGEST_LOGIN_MODULE} username=\"...\" password=\"...\")")
    digest = [e for e in entries if e.login_module == DIGEST_LOGIN_MODULE]
    if len(digest) != 1 or len(entries) != 1:
        found = ", ".join(e.login_module for e in entries) or "no login module"
        raise JaasFileError(f"{where}, section {section}: expected one {DIGEST_LOGIN_MODULE}, found {found}")
    options = digest[0].options
    missing = [key for key in ("username", "password") if key not in options]
    if missing:
        raise JaasFileError(f"{where}, section {section}: {DIGEST_LOGIN_MODULE} has no {' and no '.join(missing)}")
    if not options["username"]:
        raise JaasFileError(f"{where}, section {section}: {DIGEST_LOGIN_MODULE}'s username is empty")
    return ZkSaslLogin(options["username"], options["password"], section, path)


def zk_sasl_login(environ: Mapping[str, str], read_file: Callable[[str], str]) -> ZkSaslLogin | None:
    """The ZooKeeper SASL login a Kafka broker or tool started with this environment has: the JAAS file named by
    ``-Djava.security.auth.login.config`` in ``KAFKA_OPTS``, its section ``-Dzookeeper.sasl.clientconfig`` (default
    ``Client``), as JaasUtils.isZkSecurityEnabled finds it; ``-Dzookeeper.sasl.client=false`` beside such a section
    is Kafka's error ("JAAS configuration is present, but system property zookeeper.sasl.client is set to false").
    ``read_file(path)`` reads the file (OSError becomes JaasFileError)."""
    props = java_system_properties(environ.get(KAFKA_OPTS, ""))
    path = props.get(JAVA_LOGIN_CONFIG_PARAM)
    if not path:
        return None
    # ConfigFile: a leading "=" (-Djava.security.auth.login.config==<file>) means this file only, which is all
    # kactor reads anyway; the value may be a URL, and a file: one is that file
    local = path.removeprefix("=")
    local = local.removeprefix("file:")
    try:
        text = read_file(local)
    except OSError as e:
        raise JaasFileError(f"cannot read the JAAS file {path} (-D{JAVA_LOGIN_CONFIG_PARAM} in {KAFKA_OPTS}): "
                            f"{e.strerror or e}") from None
    section = props.get(ZK_LOGIN_CONTEXT_NAME_KEY) or ZK_LOGIN_CONTEXT_DEFAULT
    login = zk_client_login(text, section, path)
    if login is not None and props.get(ZK_SASL_CLIENT, "true").strip().lower() == "false":
        raise JaasFileError(f"JAAS configuration is present, but system property {ZK_SASL_CLIENT} is set to false, "
                            "which disables SASL in the ZooKeeper client")
    return login


def server_jaas_text(users: Mapping[str, str], section: str = "Server") -> str:
    """A ZooKeeper server's JAAS file: section ``Server`` (ZooKeeper's zookeeper.sasl.serverconfig default) with a
    DigestLoginModule holding ``user_<name>="<password>"`` for each user, what SASLAuthenticationProvider checks
    DIGEST-MD5 logins against."""
    lines = [f'    user_{name}="{_quote(password)}"' for name, password in sorted(users.items())]
    return f"{section} {{\n    {DIGEST_LOGIN_MODULE} required\n" + "\n".join(lines) + ";\n};\n"


def client_jaas_text(login: ZkSaslLogin, section: str = ZK_LOGIN_CONTEXT_DEFAULT) -> str:
    """A JAAS file whose ``Client`` section logs in as ``login``: what a Kafka tool or ZooKeeper's zkCli.sh is given
    with -Djava.security.auth.login.config."""
    return (f"{section} {{\n    {DIGEST_LOGIN_MODULE} required\n    username=\"{_quote(login.username)}\"\n"
            f"    password=\"{_quote(login.password)}\";\n}};\n")


def _quote(value: str) -> str:
    """A value inside a JAAS file's double quotes (StreamTokenizer's backslash escapes)."""
    return value.replace("\\", "\\\\").replace('"', '\\"')
