"""The seeded world of the sandbox: leagues, teams, players, sources, games and posts.

Pure data and queries, no HTTP. Everything is derived from ``seed`` and the clock's start,
so two worlds with the same seed and start are identical. Live activity (new posts, posts
indexed late, deletions) is scheduled on the sandbox clock and materialised lazily by
``World.sync``, so moving the clock forward is all a test needs to do.
"""

from __future__ import annotations

import math
import random
import threading
import uuid
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Optional

from typing_extensions import TypedDict, Unpack

from .._errors import ParameterError
from ._teams import COUNTRY_CODES, INDIVIDUAL_LEAGUES, LEAGUES, NBA_IDS, TEAM_BLOCKS
from .index import PostIndex, epoch_us

__all__ = [
    "ID_TYPES",
    "REFERENCE_IDS",
    "SPORTS",
    "Game",
    "League",
    "Media",
    "Player",
    "Post",
    "PostFields",
    "Source",
    "Team",
    "World",
    "isoformat",
]

ID_TYPES = ("code", "provider1_uid", "provider1_guid", "provider2", "service", "provider3")
"""The id systems ``id_type`` accepts (spec 4.1)."""

REFERENCE_IDS = (
    "provider2_id", "provider1_id", "provider4_id", "nba_id", "provider5_id",
    "provider6_id", "grid_id", "code", "external_id",
)
"""The reference columns ``reference_id`` accepts (spec 4.4)."""

SPORTS: dict[str, tuple[str, ...]] = {}
for _code, (_name, _sport, _full) in LEAGUES.items():
    SPORTS[_sport] = (*SPORTS.get(_sport, ()), _code)

PREGAME = timedelta(hours=3)
"""How long before ``start_time`` a post counts as pregame."""
GAME_LENGTH = timedelta(hours=4)
"""How long after ``start_time`` a post belongs to the game."""

_SNOWFLAKE_EPOCH_MS = 1288834974657
_MEDIA_HOST = "https://media.sandbox.sports-posts.example"


def isoformat(value: datetime) -> str:
    """ISO 8601 in UTC with milliseconds and a ``Z``: the service's timestamp form."""
    value = value.astimezone(timezone.utc)
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


@dataclass(frozen=True)
class League:
    """A league code of the spec, its parent sport and display name."""

    code: str
    name: str
    sport: str
    individual: bool


@dataclass(eq=False)
class _Entity:
    """What teams and players share: service id, league, an id in each id system, reference columns."""

    service_id: int
    league: str
    code: str
    provider1_guid: str
    provider1_uid: str
    provider2: str
    provider3: str
    references: dict[str, Optional[str]]

    def ids(self) -> dict[str, str]:
        """The entity's id in each ``id_type`` of spec 4.1."""
        return {
            "code": self.code, "provider1_uid": self.provider1_uid,
            "provider1_guid": self.provider1_guid, "provider2": self.provider2,
            "service": str(self.service_id), "provider3": self.provider3,
        }


@dataclass(eq=False)
class Team(_Entity):
    """A real team with its ids in every id system and its reference columns."""

    location: str
    name: str
    full_name: str
    conference: Optional[str]
    division: Optional[str]
    lat: float
    lng: float


@dataclass(eq=False)
class Player(_Entity):
    """A generated athlete (never a real person) with a UUID as provider1 guid."""

    name: str
    position: str
    team: Optional[Team]


@dataclass(eq=False)
class Source:
    """An author account; ``regions`` are the countries it is cleared for, ``custom`` a customer source."""

    author_id: str
    username: str
    name: str
    verified: bool
    regions: frozenset[str]
    custom: bool = False

    @property
    def profile_image_url(self) -> str:
        """Where the nested author form points for the avatar."""
        return f"{_MEDIA_HOST}/profile/{self.author_id}.jpg"


@dataclass(frozen=True)
class Media:
    """A MediaObject of spec 2.2."""

    type: str
    url: str
    preview_image_url: str
    width: int
    height: int
    duration_ms: int

    def to_wire(self) -> dict[str, Any]:
        """The MediaObject as JSON."""
        return {
            "type": self.type, "url": self.url, "preview_image_url": self.preview_image_url,
            "width": self.width, "height": self.height, "duration_ms": self.duration_ms,
        }


@dataclass(eq=False)
class Game:
    """A game between two teams: posts tagged with them around ``start_time`` belong to it."""

    league: str
    home: Team
    away: Team
    start_time: datetime


@dataclass(eq=False)
class Post:
    """A post of the world; visible once indexed and until deleted."""

    id: str
    created_at: datetime
    indexed_at: datetime
    league: str
    text: str
    author: Source
    score: float
    like_count: int
    retweet_count: int
    reply_count: int
    quote_count: int
    media_type: str
    media: list[Media]
    highlight: bool
    teams: list[Team]
    players: list[Player]
    geo: Optional[tuple[float, float]] = None
    game: Optional[Game] = None
    deleted_at: Optional[datetime] = None
    live: bool = False
    """Created after the sandbox started (scheduled or published), not part of the seeded history."""
    _wire: Optional[dict[str, Any]] = field(default=None, repr=False)
    _encoded: dict[str, bytes] = field(default_factory=dict, repr=False)
    key: tuple[datetime, int, str] = field(init=False, repr=False)
    """``sort_key()``, computed once: every ordering compares it (created_at and id never change)."""
    created_us: int = field(init=False, repr=False)
    """created_at in microseconds since the epoch: whole-hour ages in integer arithmetic."""

    def __post_init__(self) -> None:
        self.derive()

    def derive(self) -> None:
        """Compute ``key`` and ``created_us`` (again, after ``id`` or ``created_at`` was set)."""
        self.key = (self.created_at, len(self.id), self.id)
        self.created_us = epoch_us(self.created_at)

    @property
    def indexed_late(self) -> bool:
        """True when the post became visible noticeably after it was created."""
        return (self.indexed_at - self.created_at) > timedelta(seconds=5)

    @property
    def aspect_ratio(self) -> Optional[str]:
        """landscape, portrait or square, from the first media item; None without media."""
        if not self.media:
            return None
        m = self.media[0]
        if m.width == m.height:
            return "square"
        return "landscape" if m.width > m.height else "portrait"

    @property
    def max_duration_ms(self) -> int:
        """The longest media duration (what ``min_duration`` compares)."""
        return max((m.duration_ms for m in self.media), default=0)

    @property
    def post_url(self) -> str:
        """The post on the source platform."""
        return f"https://x.com/{self.author.username}/status/{self.id}"

    def visible_at(self, now: datetime) -> bool:
        """Indexed by ``now`` and not deleted by ``now``."""
        return self.indexed_at <= now and (self.deleted_at is None or self.deleted_at > now)

    def sort_key(self) -> tuple[datetime, int, str]:
        """created_at, then id (numerically): the tiebreak of every ordering."""
        return self.key

    def encoded(self, author_shape: str, dumps: Callable[[Any], bytes]) -> bytes:
        """``to_wire`` encoded by ``dumps``, once per author shape (posts are read far more than changed)."""
        found = self._encoded.get(author_shape)
        if found is None:
            found = self._encoded[author_shape] = dumps(self.to_wire(author_shape))
        return found

    def to_wire(self, author_shape: str = "both") -> dict[str, Any]:
        """The Post of spec 2.1; ``author_shape`` is flat, nested, both or mixed (one of the two per post)."""
        if self._wire is None:
            self._wire = {
                "id": self.id,
                "post_url": self.post_url,
                "text": self.text,
                "created_at": isoformat(self.created_at),
                "league": self.league,
                "like_count": self.like_count,
                "retweet_count": self.retweet_count,
                "reply_count": self.reply_count,
                "quote_count": self.quote_count,
                "media_type": self.media_type,
                "highlight": self.highlight,
                "teams": [
                    {"provider1_guid_id": t.provider1_guid, "service_id": t.service_id, "name": t.full_name}
                    for t in self.teams
                ],
                "players": [
                    {"provider1_guid_id": p.provider1_guid, "service_id": p.service_id, "name": p.name}
                    for p in self.players
                ],
                "media": [m.to_wire() for m in self.media],
            }
        wire = dict(self._wire)
        shape = author_shape
        if shape == "mixed":
            # One form per post, a seeded mix: a reader of one form meets the other on any page.
            shape = "nested" if zlib.crc32(self.id.encode("utf-8")) & 1 else "flat"
        if shape in ("flat", "both"):
            wire["author_username"] = self.author.username
            wire["author_id"] = self.author.author_id
        if shape in ("nested", "both"):
            wire["author"] = {
                "username": self.author.username,
                "name": self.author.name,
                "profile_image_url": self.author.profile_image_url,
                "verified": self.author.verified,
            }
        return wire


class PostFields(TypedDict, total=False):
    """What ``Sandbox.publish_post`` and ``World.publish`` may set on the new ``Post`` besides
    their own arguments (the fields of `sports_posts.sandbox.Post`)."""

    # which post, and when it shows
    id: str
    indexed_at: datetime
    deleted_at: Optional[datetime]
    live: bool
    # what it shows
    author: Source
    media_type: str
    media: list[Media]
    highlight: bool
    geo: Optional[tuple[float, float]]
    game: Optional[Game]
    # how it ranks
    like_count: int
    retweet_count: int
    reply_count: int
    quote_count: int
    score: float


# --- generation -------------------------------------------------------------------------

_FIRST = ["Jalen", "Marcus", "Tyrese", "Devon", "Caleb", "Isaiah", "Mason", "Logan", "Ethan", "Noah", "Liam", "Owen", "Aiden", "Julian", "Xavier", "Malik", "Andre", "Dante", "Theo", "Felix", "Mateo", "Luca", "Rafael", "Tomas", "Kenji", "Arjun", "Rohan", "Sipho", "Callum", "Finn", "Declan", "Rhys", "Nico", "Emil", "Viktor", "Oskar", "Hugo", "Bruno", "Diego", "Leo", "Maya", "Ava", "Sofia", "Jada", "Keira", "Nia", "Imani", "Riley", "Harper", "Quinn"]
_LAST = ["Carter", "Hayes", "Brooks", "Coleman", "Ellison", "Whitfield", "Marsh", "Okafor", "Delgado", "Navarro", "Lindqvist", "Castellano", "Moreau", "Brennan", "Gallagher", "Okonkwo", "Sato", "Tanaka", "Kapoor", "Reddy", "Mensah", "Adeyemi", "Fitzgerald", "Harrington", "Sinclair", "Vance", "Holloway", "Prescott", "Kensington", "Ashford", "Romero", "Vargas", "Silva", "Pereira", "Novak", "Kowalski", "Jansen", "Larsen", "Haddad", "Rahman", "Byrne", "Doyle", "Mercer", "Sterling", "Rutherford", "Pemberton", "Calloway", "Devereaux", "Thornton", "Whitaker"]
_POSITIONS: dict[str, tuple[str, ...]] = {
    "americanfootball": ("QB", "RB", "WR", "TE", "LB", "CB", "DE", "S"),
    "basketball": ("G", "F", "C", "PG", "SF"),
    "baseball": ("SP", "RP", "C", "SS", "CF", "1B"),
    "hockey": ("C", "LW", "RW", "D", "G"),
    "football": ("GK", "DF", "MF", "FW"),
    "cricket": ("Batter", "Bowler", "All-rounder", "Wicketkeeper"),
    "rugby": ("Prop", "Hooker", "Lock", "Flanker", "Fly-half", "Wing"),
    "golf": ("Golfer",),
    "mma": ("Lightweight", "Welterweight", "Middleweight", "Heavyweight", "Flyweight"),
}
_SPORT_NUMBERS = {
    "americanfootball": 20, "basketball": 40, "baseball": 1, "hockey": 70, "football": 600,
    "golf": 1100, "cricket": 1000, "rugby": 300, "mma": 3301,
}
_OUTLETS = (
    "Sideline Wire", "Box Score Daily", "The Overtime Desk", "Final Whistle", "Game Day Report",
    "The Stat Sheet", "Clutch Wire", "Morning Huddle", "Scoreline Now", "The Playbook",
    "Press Box Live", "Starting Lineup",
)
_WORLD = frozenset(COUNTRY_CODES)
_REGION_SETS: tuple[frozenset[str], ...] = (
    _WORLD,
    _WORLD,
    _WORLD,
    frozenset({"US", "CA", "MX", "PR"}),
    frozenset({"GB", "IE"}),
    frozenset({"GB", "IE", "FR", "DE", "ES", "IT", "NL", "PT", "BE"}),
    frozenset({"IN", "GB", "AU", "NZ", "ZA"}),
)

_TEMPLATES_TEAM = (
    "{team} take down {opp} {a}-{b} behind a huge night from {player}.",
    "Final: {team} {a}, {opp} {b}. {player} led the way.",
    "{player} is listed as questionable for {team} with an ankle injury.",
    "Practice report: {player} was a full participant for {team} today.",
    "{team} have agreed to a contract extension with {player}, per sources.",
    "Watch {player} make the play of the night for {team} against {opp}.",
    "{team} coach on {player}: 'The work shows up every single day.'",
    "Trade talk: {team} are exploring deals ahead of the deadline.",
    "{team} announce {player} will return to the lineup against {opp}.",
    "Film room: how {team} beat the {opp} pressure all game.",
    "{player} reaches a career milestone as {team} roll past {opp}.",
    "Injury update: {team} place {player} on the injured list.",
)
_TEMPLATES_PREGAME = (
    "Pregame: {team} host {opp} tonight. Lineups out shortly.",
    "Arrivals: {player} walks in ready for {team} vs {opp}.",
    "Preview: three things to watch when {team} meet {opp}.",
)
_TEMPLATES_GAME = (
    "{player} scores for {team}! {team} {a}, {opp} {b}.",
    "What a sequence from {player}. {team} lead {opp} {a}-{b}.",
    "Halftime: {team} {a}, {opp} {b}.",
    "{opp} answer right back. It's {a}-{b} {team}.",
)
_TEMPLATES_INDIVIDUAL = (
    "{player} cards a {a} to grab the lead after round {b}.",
    "{player} withdraws from this week's event with a back injury.",
    "Watch {player} hole out from the fairway.",
    "{player} signs a new multi-year deal.",
    "{player} wins by decision after three rounds.",
    "{player} and {player2} are booked for next month's main card.",
    "Scorecard: {player} sits {a} shots back heading into round {b}.",
    "{player} on the comeback: 'I feel stronger than ever.'",
)
_GOLF_VENUES = ((33.503, -82.020), (36.568, -121.950), (30.198, -81.394), (56.343, -2.803))
_MMA_VENUES = ((36.103, -115.178), (40.751, -73.993), (24.453, 54.377))

_LEAGUE_WEIGHTS = {
    "NFL": 14, "NBA": 12, "MLB": 9, "NHL": 8, "EPL": 9, "MLS": 5, "NCAAFB": 6, "NCAAMB": 5,
    "WNBA": 4, "SOCCER": 6, "FIFA": 4, "CRICKET": 4, "RUGBY": 3, "PGA": 4, "GOLF": 3, "MMA": 4,
}


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


class _Generated:
    """Worlds generated before, kept as snapshots: a world asked for again with the same seed,
    start and sizes (a test suite's sandboxes on a manual clock) is a copy of its snapshot,
    which takes a third of the time generating takes.

    A world is snapshotted the second time its parameters are asked for, so a world made
    once (a sandbox on the system clock starts at a new instant each time) costs nothing
    more. Few and small worlds are kept: the most recent ``KEPT``, of at most ``LARGEST`` posts,
    and no more than ``BUDGET`` bytes of snapshots in all.
    """

    KEPT = 8
    LARGEST = 20_000
    BUDGET = 64 << 20
    _UNSHARED = ("_lock", "_now")  # made anew for each copy

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._snapshots: dict[tuple[Any, ...], bytes] = {}
        self._asked: dict[tuple[Any, ...], None] = {}

    def copy(self, key: tuple[Any, ...]) -> Optional[dict[str, Any]]:
        """The state of a world generated for ``key`` before, as a copy of its own; None when
        there is no snapshot (the caller generates it, then calls ``keep``)."""
        import pickle

        with self._lock:
            snapshot = self._snapshots.get(key)
            if snapshot is not None:
                self._snapshots[key] = self._snapshots.pop(key)  # the most recently used last
        return None if snapshot is None else pickle.loads(snapshot)  # bytes made by keep, in this process

    def keep(self, key: tuple[Any, ...], world: World) -> None:
        """Snapshot a freshly generated world, if its parameters were asked for before."""
        import pickle

        if len(world.posts) > self.LARGEST:
            return
        with self._lock:
            seen = key in self._asked
            self._asked.pop(key, None)
            self._asked[key] = None
            while len(self._asked) > 8 * self.KEPT:
                del self._asked[next(iter(self._asked))]
        if not seen:
            return
        state = {name: value for name, value in world.__dict__.items() if name not in self._UNSHARED}
        snapshot = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
        with self._lock:
            self._snapshots[key] = snapshot
            while len(self._snapshots) > self.KEPT or sum(map(len, self._snapshots.values())) > self.BUDGET:
                del self._snapshots[next(iter(self._snapshots))]  # the least recently used


_GENERATED = _Generated()


class World:
    """Leagues, teams, players, sources, games and posts for one seed; thread-safe."""

    def __init__(
        self,
        seed: int = 7,
        *,
        start: datetime,
        posts: int = 3000,
        history_hours: float = 72.0,
        posts_per_minute: float = 2.0,
        late_index_rate: float = 0.1,
        late_index_delay: tuple[float, float] = (30.0, 180.0),
        deletions_per_hour: float = 4.0,
        now: Optional[Callable[[], datetime]] = None,
    ) -> None:
        self._now = now or (lambda: start)
        self._lock = threading.RLock()
        # Everything below follows from these: a world asked for again is a copy of the first.
        key = (seed, start, posts, history_hours, posts_per_minute, late_index_rate, tuple(late_index_delay),
               deletions_per_hour)
        state = _GENERATED.copy(key)
        if state is not None:
            self.__dict__.update(state)
            return
        self._generate(seed, start, posts, history_hours, posts_per_minute, late_index_rate, late_index_delay,
                       deletions_per_hour)
        _GENERATED.keep(key, self)

    def _generate(
        self, seed: int, start: datetime, posts: int, history_hours: float, posts_per_minute: float,
        late_index_rate: float, late_index_delay: tuple[float, float], deletions_per_hour: float,
    ) -> None:
        self.seed = seed
        self.start = start
        self.posts_per_minute = posts_per_minute
        self.late_index_rate = late_index_rate
        self.late_index_delay = late_index_delay
        self.deletions_per_hour = deletions_per_hour
        self._seq = 0
        self._ordered: Optional[list[Post]] = None
        self.leagues: dict[str, League] = {
            code: League(code, name, sport, code in INDIVIDUAL_LEAGUES)
            for code, (name, sport, _full) in LEAGUES.items()
        }
        self.league_codes: frozenset[str] = frozenset(self.leagues)
        """Every league code, as the set queries intersect with a key's plan."""
        rng = random.Random(seed)
        self.teams: list[Team] = []
        self.players: list[Player] = []
        self._build_teams(rng)
        self._build_players(rng)
        self._teams_by_league: dict[str, list[Team]] = {}
        for t in self.teams:
            self._teams_by_league.setdefault(t.league, []).append(t)
        self._players_by_league: dict[str, list[Player]] = {}
        self._roster: dict[int, list[Player]] = {}
        for p in self.players:
            self._players_by_league.setdefault(p.league, []).append(p)
            if p.team is not None:
                self._roster.setdefault(p.team.service_id, []).append(p)
        self.sources: list[Source] = []
        self._sources_by_league: dict[str, list[Source]] = {}
        self._build_sources(rng)
        self.games: list[Game] = []
        self.posts: list[Post] = []
        self._posts_by_id: dict[str, Post] = {}
        self.index: PostIndex = PostIndex()
        self._deleted: list[Post] = []
        self._build_games(rng, history_hours)
        self._build_history(rng, posts, history_hours)
        self._live_count = 0
        self._deletion_count = 0
        self._team_index = self._index(self.teams)
        self._player_index = self._index(self.players)

    # -- reference data -----------------------------------------------------------------

    def _build_teams(self, rng: random.Random) -> None:
        for league_n, (code, (_name, sport, full)) in enumerate(LEAGUES.items()):
            block = TEAM_BLOCKS.get(code, "")
            conference: Optional[str] = None
            division: Optional[str] = None
            number = 0
            for raw in block.strip().splitlines():
                if raw.startswith("#"):
                    conf, _, div = raw[1:].partition("|")
                    conference, division = conf or None, div or None
                    continue
                team_code, location, name, lat, lng = raw.split("|")
                number += 1
                service_id = 1000 + league_n * 100 + number
                t_number = (league_n + 1) * 37 + number * 3
                references: dict[str, Optional[str]] = {
                    "provider2_id": _uuid(rng),
                    "provider1_id": str(t_number),
                    "provider4_id": str(rng.randrange(10_000, 99_999)),
                    "nba_id": NBA_IDS.get(team_code) if code == "NBA" else None,
                    "provider5_id": f"{code.lower()}-{team_code.lower()}",
                    "provider6_id": str(rng.randrange(100_000, 999_999)),
                    "grid_id": f"grid:team:{rng.randrange(1_000_000, 9_999_999)}",
                    "code": team_code,
                    "external_id": f"ext-{code.lower()}-{number:03d}",
                }
                self.teams.append(Team(
                    service_id=service_id, league=code, code=team_code, location=location,
                    name=name, full_name=name if full else f"{location} {name}",
                    conference=conference, division=division, lat=float(lat), lng=float(lng),
                    provider1_guid=f"s:{_SPORT_NUMBERS[sport]}~l:{league_n * 3 + 10}~t:{t_number}",
                    provider1_uid=str(t_number),
                    provider2=references["provider2_id"] or "",
                    provider3=str(rng.randrange(100_000, 999_999)),
                    references=references,
                ))

    def _build_players(self, rng: random.Random) -> None:
        service_id = 100_000
        used: set[str] = set()

        def make(league: str, team: Optional[Team]) -> None:
            nonlocal service_id
            while True:
                name = f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
                if name not in used:
                    used.add(name)
                    break
            service_id += 1
            guid = _uuid(rng)
            references: dict[str, Optional[str]] = {
                "provider2_id": _uuid(rng), "provider1_id": str(service_id * 7 % 1_000_003),
                "provider4_id": str(rng.randrange(10_000, 99_999)),
                "nba_id": str(1_630_000 + service_id % 10_000) if league == "NBA" else None,
                "provider5_id": name.lower().replace(" ", "-"),
                "provider6_id": str(rng.randrange(100_000, 999_999)),
                "grid_id": f"grid:player:{rng.randrange(1_000_000, 9_999_999)}",
                "code": name.lower().replace(" ", "-"),
                "external_id": f"ext-p-{service_id}",
            }
            self.players.append(Player(
                service_id=service_id, league=league, name=name,
                position=rng.choice(_POSITIONS[self.leagues[league].sport]), team=team,
                code=references["code"] or "", provider1_guid=guid,
                provider1_uid=references["provider1_id"] or "",
                provider2=references["provider2_id"] or "",
                provider3=str(rng.randrange(1_000_000, 9_999_999)), references=references,
            ))

        for team in self.teams:
            for _ in range(4):
                make(team.league, team)
        for league in sorted(INDIVIDUAL_LEAGUES):
            for _ in range(30):
                make(league, None)

    def _build_sources(self, rng: random.Random) -> None:
        n = 0

        def add(league: str, username: str, name: str, verified: bool,
                regions: frozenset[str], custom: bool = False) -> None:
            nonlocal n
            n += 1
            source = Source(str(1_400_000_000 + n * 7919), username, name, verified, regions, custom)
            self.sources.append(source)
            self._sources_by_league.setdefault(league, []).append(source)

        for code in LEAGUES:
            for i in range(4):
                outlet = _OUTLETS[(len(self.sources) + i) % len(_OUTLETS)]
                handle = outlet.replace(" ", "") + "_" + code
                add(code, handle, f"{outlet} {code}", True, rng.choice(_REGION_SETS))
            for _ in range(3):
                person = f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
                handle = person.split()[0][0] + person.split()[1] + code.lower()
                add(code, handle, person, rng.random() < 0.8, rng.choice(_REGION_SETS))
            add(code, f"AcmeSports_{code}", f"Acme Sports {code} (custom)", False, _WORLD, True)

    def _build_games(self, rng: random.Random, history_hours: float) -> None:
        days = int(math.ceil(history_hours / 24)) + 1
        day0 = self.start.replace(hour=0, minute=0, second=0, microsecond=0)
        for code, league in self.leagues.items():
            teams = self.league_teams(code)
            if league.individual or len(teams) < 2:
                continue
            for day in range(-days + 1, 2):
                pool = list(teams)
                rng.shuffle(pool)
                for g in range(min(3, len(pool) // 2)):
                    start = day0 + timedelta(days=day, hours=rng.choice((17, 19, 23, 24, 25)))
                    self.games.append(Game(code, pool[2 * g], pool[2 * g + 1], start))

    def _next_id(self, created_at: datetime, rng: random.Random) -> str:
        self._seq += 1
        ms = int(created_at.timestamp() * 1000) - _SNOWFLAKE_EPOCH_MS
        return str((ms << 22) | (rng.randrange(32) << 17) | (self._seq % 4096) << 5 | (self.seed % 32))

    def _make_post(
        self,
        rng: random.Random,
        created_at: datetime,
        league: str,
        *,
        game: Optional[Game] = None,
        pregame: bool = False,
        indexed_at: Optional[datetime] = None,
    ) -> Post:
        info = self.leagues[league]
        # The wire carries milliseconds: keep created_at exact at that precision so `since` is exact.
        created_at = created_at.replace(microsecond=created_at.microsecond // 1000 * 1000)
        teams: list[Team] = []
        players: list[Player] = []
        geo: Optional[tuple[float, float]] = None
        a = rng.randrange(0, 40 if info.sport in ("basketball", "americanfootball") else 6)
        b = max(0, a - rng.randrange(1, 8))
        if info.individual:
            pool = self.league_players(league)
            players = rng.sample(pool, 2 if rng.random() < 0.2 else 1)
            template = rng.choice(_TEMPLATES_INDIVIDUAL)
            other = rng.choice(pool)
            text = template.format(player=players[0].name, player2=other.name, a=rng.randrange(62, 74),
                                   b=rng.randrange(1, 5))
            if rng.random() < 0.35:
                geo = rng.choice(_MMA_VENUES if league == "MMA" else _GOLF_VENUES)
        else:
            if game is not None:
                team, opp = (game.home, game.away) if rng.random() < 0.5 else (game.away, game.home)
                teams = [game.home, game.away]
                templates: tuple[str, ...] = _TEMPLATES_PREGAME if pregame else _TEMPLATES_GAME
                geo = (game.home.lat, game.home.lng)
            else:
                league_teams = self.league_teams(league)
                team, opp = rng.sample(league_teams, 2)
                teams = [team, opp] if rng.random() < 0.3 else [team]
                templates = _TEMPLATES_TEAM
                if rng.random() < 0.35:
                    geo = (team.lat, team.lng)
            player = rng.choice(self._roster[team.service_id])
            text = rng.choice(templates).format(team=team.full_name, opp=opp.full_name,
                                                player=player.name, a=a, b=b)
            # A named player is always tagged; an unnamed one sometimes (the tagger's inference).
            players = [player] if player.name in text or rng.random() < 0.3 else []
        if geo is not None:
            geo = (round(geo[0] + rng.uniform(-0.03, 0.03), 5), round(geo[1] + rng.uniform(-0.03, 0.03), 5))
        sources = self._sources_by_league[league]
        author = sources[-1] if rng.random() < 0.04 else rng.choice(sources[:-1])
        score = round(min(9.0, rng.betavariate(2.0, 3.2) * 11.0), 1)
        likes = int(6 * 2.7 ** score * rng.uniform(0.7, 1.3))
        post_id = self._next_id(created_at, rng)
        media_type, media = self._make_media(rng, post_id)
        highlight = media_type == "video" and rng.random() < 0.45
        return Post(
            id=post_id, created_at=created_at, indexed_at=indexed_at or created_at,
            league=league, text=text, author=author, score=score, like_count=likes,
            retweet_count=int(likes * rng.uniform(0.05, 0.25)),
            reply_count=int(likes * rng.uniform(0.01, 0.08)),
            quote_count=int(likes * rng.uniform(0.0, 0.03)),
            media_type=media_type, media=media, highlight=highlight, teams=teams,
            players=players, geo=geo, game=game,
        )

    @staticmethod
    def _make_media(rng: random.Random, post_id: str) -> tuple[str, list[Media]]:
        roll = rng.random()
        base = f"{_MEDIA_HOST}/{post_id}"
        if roll < 0.3:
            return "none", []
        if roll < 0.65:
            kind = "photo" if rng.random() < 0.5 else "image"
            count = 1 if rng.random() < 0.7 else rng.randrange(2, 5)
            media = []
            for i in range(count):
                w, h = rng.choice(((1200, 675), (1080, 1350), (1080, 1080), (2048, 1152)))
                media.append(Media(kind, f"{base}/{i}.jpg", f"{base}/{i}_thumb.jpg", w, h, 0))
            return kind, media
        if roll < 0.9:
            w, h = rng.choice(((1280, 720), (1920, 1080), (720, 1280), (1080, 1920), (1080, 1080)))
            return "video", [Media("video", f"{base}/video.mp4", f"{base}/video_thumb.jpg", w, h,
                                   rng.randrange(4_000, 180_000))]
        kind = "animated_gif" if rng.random() < 0.5 else "gif"
        w, h = rng.choice(((480, 270), (498, 498), (360, 640)))
        return kind, [Media(kind, f"{base}/clip.mp4", f"{base}/clip_thumb.jpg", w, h,
                            rng.randrange(1_500, 8_000))]

    def _build_history(self, rng: random.Random, count: int, history_hours: float) -> None:
        span = history_hours * 3600.0
        codes = list(_LEAGUE_WEIGHTS)
        weights = [_LEAGUE_WEIGHTS[c] for c in codes]
        for game in self.games:
            if game.start_time + GAME_LENGTH > self.start or game.start_time < self.start - timedelta(seconds=span):
                continue
            for i in range(6):
                pregame = i < 2
                offset = rng.uniform(-PREGAME.total_seconds(), 0) if pregame else rng.uniform(0, GAME_LENGTH.total_seconds())
                self._add(self._make_post(rng, game.start_time + timedelta(seconds=offset), game.league,
                                          game=game, pregame=pregame), indexed=False)
        leagues = rng.choices(codes, weights, k=max(0, count - len(self.posts)))
        for league in leagues:
            created = self.start - timedelta(seconds=rng.uniform(1.0, span))
            self._add(self._make_post(rng, created, league), indexed=False)
        self.index.add_many(self.posts)  # the whole history at once
        # A few posts were already deleted before the sandbox started: the compliance list is not
        # empty (unless there is no history at all).
        for post in rng.sample(self.posts, min(len(self.posts), max(1, len(self.posts) // 200))):
            self._mark_deleted(post, post.created_at + (self.start - post.created_at) * rng.uniform(0.2, 0.9))

    def _add(self, post: Post, *, indexed: bool = True) -> None:
        """Add a post (``indexed=False``: the caller indexes it, with others, at once)."""
        self.posts.append(post)
        self._posts_by_id[post.id] = post
        if indexed:
            self.index.add(post)
        self._ordered = None

    def _mark_deleted(self, post: Post, at: datetime) -> None:
        """Delete at ``at``, and list the post once for the compliance list."""
        if post.deleted_at is None:
            self._deleted.append(post)
        post.deleted_at = at

    def _in_order(self) -> list[Post]:
        """Every post oldest first, sorted once per change rather than once per request."""
        if self._ordered is None:
            self._ordered = sorted(self.posts, key=Post.sort_key)
        assert self._ordered is not None
        return self._ordered

    @staticmethod
    def _index(entities: Iterable[Any]) -> dict[tuple[str, str], list[Any]]:
        index: dict[tuple[str, str], list[Any]] = {}
        for entity in entities:
            for id_type, value in entity.ids().items():
                key = (id_type, value.strip().lower())
                index.setdefault(key, []).append(entity)
        return index

    # -- live activity ----------------------------------------------------------------

    def sync(self, now: Optional[datetime] = None) -> datetime:
        """Materialise the live posts and deletions scheduled up to ``now``; returns ``now``."""
        now = now or self._now()
        with self._lock:
            post_every = 60.0 / self.posts_per_minute if self.posts_per_minute > 0 else math.inf
            delete_every = 3600.0 / self.deletions_per_hour if self.deletions_per_hour > 0 else math.inf
            while True:
                next_post = (self._live_count + 1) * post_every
                next_delete = (self._deletion_count + 1) * delete_every
                when = min(next_post, next_delete)
                if math.isinf(when) or self.start + timedelta(seconds=when) > now:
                    break
                at = self.start + timedelta(seconds=when)
                if next_post <= next_delete:
                    self._live_count += 1
                    self._publish_live(self._live_count, at)
                else:
                    self._deletion_count += 1
                    self._delete_scheduled(self._deletion_count, at)
        return now

    def _publish_live(self, k: int, at: datetime) -> None:
        rng = random.Random(f"{self.seed}:live:{k}")
        league = rng.choices(list(_LEAGUE_WEIGHTS), list(_LEAGUE_WEIGHTS.values()))[0]
        indexed_at = at
        if rng.random() < self.late_index_rate:
            indexed_at = at + timedelta(seconds=rng.uniform(*self.late_index_delay))
        post = self._make_post(rng, at, league, indexed_at=indexed_at)
        post.live = True
        self._add(post)

    def _delete_scheduled(self, j: int, at: datetime) -> None:
        rng = random.Random(f"{self.seed}:delete:{j}")
        candidates = [p for p in self.posts[-500:] if p.visible_at(at)]
        if candidates:
            self._mark_deleted(rng.choice(candidates), at)

    def publish(
        self,
        *,
        league: str = "NFL",
        text: Optional[str] = None,
        created_at: Optional[datetime] = None,
        index_delay: float = 0.0,
        teams: Optional[Sequence[Team]] = None,
        players: Optional[Sequence[Player]] = None,
        **fields: Unpack[PostFields],
    ) -> Post:
        """Add a post created ``created_at`` (default now), visible ``index_delay`` seconds later,
        by one of the league's regular sources unless ``author`` is given."""
        league = league.upper()
        if league not in self.leagues:
            raise ParameterError(f"unknown league {league!r}")
        if created_at is not None and created_at.utcoffset() is None:
            raise ParameterError("created_at must be timezone-aware (a naive datetime names no instant)")
        with self._lock:
            now = self.sync()
            created = created_at or now
            rng = random.Random(f"{self.seed}:publish:{self._seq}")
            post = self._make_post(rng, created, league,
                                   indexed_at=created + timedelta(seconds=index_delay))
            post.live = True
            if post.author.custom and "author" not in fields:
                # A published post must show up in a default GET /posts, which leaves custom
                # sources out: the generator's occasional custom author is swapped for a regular one.
                post.author = rng.choice([s for s in self._sources_by_league[league] if not s.custom])
            if text is not None:
                post.text = text
            if teams is not None:
                post.teams = list(teams)
            if players is not None:
                post.players = list(players)
            for name, value in fields.items():
                if not hasattr(post, name) or name.startswith("_") or name in ("key", "created_us"):
                    raise TypeError(f"Post has no field {name!r}")
                setattr(post, name, value)
            post.derive()
            if post.game is None and "game" not in fields:
                post.game = self.game_of(post)
            if post.id in self._posts_by_id:
                raise ParameterError(f"a post with id {post.id!r} already exists")
            self._add(post)
            return post

    def delete(self, post_id: str, at: Optional[datetime] = None) -> Post:
        """Delete a post now: it leaves GET /posts and joins /account/x-ids."""
        with self._lock:
            post = self._posts_by_id[post_id]
            if post.deleted_at is None:
                self._mark_deleted(post, at or self.sync())
            return post

    # -- queries ----------------------------------------------------------------------

    @property
    def lock(self) -> threading.RLock:
        """Held while reading the index: live posts and deletions wait until a page is read."""
        return self._lock

    def get_post(self, post_id: str) -> Optional[Post]:
        """Any post by id, visible or not."""
        return self._posts_by_id.get(post_id)

    def visible_posts(self, now: Optional[datetime] = None, *, league: Optional[str] = None) -> list[Post]:
        """Posts GET /posts can return at ``now`` (indexed and not deleted), oldest first."""
        with self._lock:
            now = self.sync(now)
            posts = self._in_order() if league is None else self.index.in_time_order(league)
            return [p for p in posts if p.visible_at(now)]

    def posts_created_between(self, after: datetime, until: datetime) -> list[Post]:
        """Every post (visible or not) created in (after, until], oldest first."""
        with self._lock:
            self.sync()
            posts = [p for p in self.posts if after < p.created_at <= until]
        posts.sort(key=Post.sort_key)
        return posts

    def deleted_posts(self, now: Optional[datetime] = None) -> list[Post]:
        """Posts deleted by ``now``, in deletion order (the compliance list)."""
        with self._lock:
            now = self.sync(now)
            deleted = [p for p in self._deleted if p.deleted_at is not None and p.deleted_at <= now]
        deleted.sort(key=lambda p: (p.deleted_at or now, p.id))
        return deleted

    def league_teams(self, league: str) -> list[Team]:
        """Teams of a league, in data order."""
        if not hasattr(self, "_teams_by_league"):
            return [t for t in self.teams if t.league == league]
        return list(self._teams_by_league.get(league, ()))

    def league_players(self, league: str) -> list[Player]:
        """Players of a league."""
        return list(self._players_by_league.get(league, ()))

    def team(self, league: str, code: str) -> Team:
        """A team by league and code, e.g. ``world.team("NFL", "KC")``."""
        for t in self.teams:
            if t.league == league.upper() and t.code == code.upper():
                return t
        raise KeyError(f"{league}/{code}")

    def find_teams(self, id_type: str, value: str) -> list[Team]:
        """Teams whose id in ``id_type`` is ``value`` (codes repeat across leagues)."""
        return list(self._team_index.get((id_type, value.strip().lower()), []))

    def find_players(self, id_type: str, value: str) -> list[Player]:
        """Players whose id in ``id_type`` is ``value``."""
        return list(self._player_index.get((id_type, value.strip().lower()), []))

    def game_of(self, post: Post) -> Optional[Game]:
        """The scheduled game a post belongs to: tagged with both its teams, created in its
        window (pregame included); None for any other post."""
        ids = {t.service_id for t in post.teams}
        for game in self.games:
            if (game.home.service_id in ids and game.away.service_id in ids
                    and game.start_time - PREGAME <= post.created_at < game.start_time + GAME_LENGTH):
                return game
        return None

    def games_of(self, league: str) -> list[Game]:
        """Games of a league, in start order."""
        return sorted((g for g in self.games if g.league == league), key=lambda g: g.start_time)
