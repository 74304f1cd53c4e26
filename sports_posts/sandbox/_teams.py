"""Reference data of the seeded world: leagues, real teams (read from teams.txt), country codes.

Teams are real institutions; every *person* in the sandbox (players, golfers, fighters,
reporters) is generated, so the sandbox never invents news about a real person.
teams.txt holds one block per league: ``#Conference|Division`` lines set the grouping of the
lines below them; a team line is ``CODE|Location|Name|lat|lng``.
"""

from __future__ import annotations

from importlib import resources

from .._vocabulary import COUNTRIES

__all__ = ["COUNTRY_CODES", "INDIVIDUAL_LEAGUES", "LEAGUES", "NBA_IDS", "TEAM_BLOCKS"]

# code -> (display name, sport, team name is the full name?)
LEAGUES: dict[str, tuple[str, str, bool]] = {
    "NFL": ("National Football League", "americanfootball", False),
    "NCAAFB": ("NCAA Football", "americanfootball", False),
    "NBA": ("National Basketball Association", "basketball", False),
    "WNBA": ("Women's National Basketball Association", "basketball", False),
    "NCAAMB": ("NCAA Men's Basketball", "basketball", False),
    "MLB": ("Major League Baseball", "baseball", False),
    "NHL": ("National Hockey League", "hockey", False),
    "PGA": ("PGA Tour", "golf", True),
    "GOLF": ("Professional Golf", "golf", True),
    "EPL": ("English Premier League", "football", True),
    "MLS": ("Major League Soccer", "football", True),
    "FIFA": ("FIFA National Teams", "football", True),
    "SOCCER": ("European Club Football", "football", True),
    "CRICKET": ("Indian Premier League", "cricket", True),
    "RUGBY": ("International Rugby Union", "rugby", True),
    "MMA": ("Mixed Martial Arts", "mma", True),
}

# Leagues of individual athletes: no teams, only players.
INDIVIDUAL_LEAGUES = frozenset({"PGA", "GOLF", "MMA"})


def _read_team_blocks() -> dict[str, str]:
    """The blocks of teams.txt by league: ``[CODE]`` opens a block, ``//`` lines are comments."""
    text = resources.files("sports_posts.sandbox").joinpath("teams.txt").read_text("utf-8")
    blocks: dict[str, list[str]] = {}
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith("[") and line.endswith("]"):
            lines = blocks.setdefault(line[1:-1], [])
        elif line and not line.startswith("//"):
            lines.append(line)
    return {code: "\n".join(block) for code, block in blocks.items()}


# The teams live in a data file: a table of real teams is data, not code.
TEAM_BLOCKS: dict[str, str] = _read_team_blocks()

# The real NBA team ids (reference column nba_id).
NBA_IDS: dict[str, str] = {
    code: str(1610612737 + i)
    for i, code in enumerate(
        ["ATL", "BOS", "CLE", "NOP", "CHI", "DAL", "DEN", "GSW", "HOU", "LAC", "LAL", "MIA", "MIL", "MIN", "BKN", "NYK", "ORL", "IND", "PHI", "PHX", "POR", "SAC", "SAS", "OKC", "TOR", "UTA", "MEM", "WAS", "DET", "CHA"]
    )
}

COUNTRY_CODES = COUNTRIES
"""ISO 3166-1 alpha-2, officially assigned codes (user_location is checked against these)."""
