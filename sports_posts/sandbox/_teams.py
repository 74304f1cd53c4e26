"""Reference data of the seeded world: real teams with their cities, conferences and divisions.

Teams are real institutions; every *person* in the sandbox (players, golfers, fighters,
reporters) is generated, so the sandbox never invents news about a real person.
Format of a block: ``#Conference|Division`` lines set the grouping of the lines below them;
a team line is ``CODE|Location|Name|lat|lng``.
"""

from __future__ import annotations

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

TEAM_BLOCKS: dict[str, str] = {
    "NFL": """
#AFC|AFC East
BUF|Buffalo|Bills|42.774|-78.787
MIA|Miami|Dolphins|25.958|-80.239
NE|New England|Patriots|42.091|-71.264
NYJ|New York|Jets|40.814|-74.074
#AFC|AFC North
BAL|Baltimore|Ravens|39.278|-76.623
CIN|Cincinnati|Bengals|39.095|-84.516
CLE|Cleveland|Browns|41.506|-81.700
PIT|Pittsburgh|Steelers|40.447|-80.016
#AFC|AFC South
HOU|Houston|Texans|29.685|-95.411
IND|Indianapolis|Colts|39.760|-86.164
JAX|Jacksonville|Jaguars|30.324|-81.637
TEN|Tennessee|Titans|36.166|-86.771
#AFC|AFC West
DEN|Denver|Broncos|39.744|-105.020
KC|Kansas City|Chiefs|39.049|-94.484
LV|Las Vegas|Raiders|36.091|-115.184
LAC|Los Angeles|Chargers|33.953|-118.339
#NFC|NFC East
DAL|Dallas|Cowboys|32.748|-97.093
NYG|New York|Giants|40.813|-74.074
PHI|Philadelphia|Eagles|39.901|-75.168
WAS|Washington|Commanders|38.908|-76.864
#NFC|NFC North
CHI|Chicago|Bears|41.862|-87.617
DET|Detroit|Lions|42.340|-83.046
GB|Green Bay|Packers|44.501|-88.062
MIN|Minnesota|Vikings|44.974|-93.258
#NFC|NFC South
ATL|Atlanta|Falcons|33.755|-84.401
CAR|Carolina|Panthers|35.226|-80.853
NO|New Orleans|Saints|29.951|-90.081
TB|Tampa Bay|Buccaneers|27.976|-82.503
#NFC|NFC West
ARI|Arizona|Cardinals|33.528|-112.263
LAR|Los Angeles|Rams|33.953|-118.339
SF|San Francisco|49ers|37.403|-121.970
SEA|Seattle|Seahawks|47.595|-122.332
""",
    "NBA": """
#Eastern|Atlantic
BOS|Boston|Celtics|42.366|-71.062
BKN|Brooklyn|Nets|40.683|-73.976
NYK|New York|Knicks|40.751|-73.993
PHI|Philadelphia|76ers|39.901|-75.172
TOR|Toronto|Raptors|43.643|-79.379
#Eastern|Central
CHI|Chicago|Bulls|41.881|-87.674
CLE|Cleveland|Cavaliers|41.497|-81.688
DET|Detroit|Pistons|42.341|-83.055
IND|Indiana|Pacers|39.764|-86.156
MIL|Milwaukee|Bucks|43.045|-87.917
#Eastern|Southeast
ATL|Atlanta|Hawks|33.757|-84.396
CHA|Charlotte|Hornets|35.225|-80.839
MIA|Miami|Heat|25.781|-80.188
ORL|Orlando|Magic|28.539|-81.384
WAS|Washington|Wizards|38.898|-77.021
#Western|Northwest
DEN|Denver|Nuggets|39.749|-105.008
MIN|Minnesota|Timberwolves|44.980|-93.276
OKC|Oklahoma City|Thunder|35.463|-97.515
POR|Portland|Trail Blazers|45.532|-122.667
UTA|Utah|Jazz|40.768|-111.901
#Western|Pacific
GSW|Golden State|Warriors|37.768|-122.388
LAC|LA|Clippers|33.945|-118.343
LAL|Los Angeles|Lakers|34.043|-118.267
PHX|Phoenix|Suns|33.446|-112.071
SAC|Sacramento|Kings|38.580|-121.500
#Western|Southwest
DAL|Dallas|Mavericks|32.790|-96.810
HOU|Houston|Rockets|29.751|-95.362
MEM|Memphis|Grizzlies|35.138|-90.051
NOP|New Orleans|Pelicans|29.949|-90.082
SAS|San Antonio|Spurs|29.427|-98.438
""",
    "WNBA": """
#Eastern|
ATL|Atlanta|Dream|33.755|-84.390
CHI|Chicago|Sky|41.880|-87.630
CON|Connecticut|Sun|41.491|-72.089
IND|Indiana|Fever|39.764|-86.156
NYL|New York|Liberty|40.683|-73.976
WAS|Washington|Mystics|38.867|-76.990
#Western|
DAL|Dallas|Wings|32.731|-97.108
GSV|Golden State|Valkyries|37.768|-122.388
LVA|Las Vegas|Aces|36.090|-115.178
LAS|Los Angeles|Sparks|34.043|-118.267
MIN|Minnesota|Lynx|44.980|-93.276
PHX|Phoenix|Mercury|33.446|-112.071
SEA|Seattle|Storm|47.622|-122.354
""",
    "MLB": """
#American League|AL East
BAL|Baltimore|Orioles|39.284|-76.622
BOS|Boston|Red Sox|42.346|-71.097
NYY|New York|Yankees|40.829|-73.926
TB|Tampa Bay|Rays|27.768|-82.653
TOR|Toronto|Blue Jays|43.641|-79.389
#American League|AL Central
CWS|Chicago|White Sox|41.830|-87.634
CLE|Cleveland|Guardians|41.496|-81.685
DET|Detroit|Tigers|42.339|-83.049
KC|Kansas City|Royals|39.051|-94.480
MIN|Minnesota|Twins|44.982|-93.278
#American League|AL West
HOU|Houston|Astros|29.757|-95.355
LAA|Los Angeles|Angels|33.800|-117.883
ATH|Sacramento|Athletics|38.580|-121.514
SEA|Seattle|Mariners|47.591|-122.332
TEX|Texas|Rangers|32.747|-97.084
#National League|NL East
ATL|Atlanta|Braves|33.891|-84.468
MIA|Miami|Marlins|25.778|-80.220
NYM|New York|Mets|40.757|-73.846
PHI|Philadelphia|Phillies|39.906|-75.166
WSH|Washington|Nationals|38.873|-77.007
#National League|NL Central
CHC|Chicago|Cubs|41.948|-87.656
CIN|Cincinnati|Reds|39.097|-84.507
MIL|Milwaukee|Brewers|43.028|-87.971
PIT|Pittsburgh|Pirates|40.447|-80.006
STL|St. Louis|Cardinals|38.623|-90.193
#National League|NL West
ARI|Arizona|Diamondbacks|33.445|-112.067
COL|Colorado|Rockies|39.756|-104.994
LAD|Los Angeles|Dodgers|34.074|-118.240
SD|San Diego|Padres|32.707|-117.157
SF|San Francisco|Giants|37.779|-122.389
""",
    "NHL": """
#Eastern|Atlantic
BOS|Boston|Bruins|42.366|-71.062
BUF|Buffalo|Sabres|42.875|-78.876
DET|Detroit|Red Wings|42.341|-83.055
FLA|Florida|Panthers|26.158|-80.326
MTL|Montréal|Canadiens|45.496|-73.569
OTT|Ottawa|Senators|45.297|-75.927
TB|Tampa Bay|Lightning|27.943|-82.452
TOR|Toronto|Maple Leafs|43.643|-79.379
#Eastern|Metropolitan
CAR|Carolina|Hurricanes|35.803|-78.722
CBJ|Columbus|Blue Jackets|39.969|-83.006
NJ|New Jersey|Devils|40.734|-74.171
NYI|New York|Islanders|40.713|-73.726
NYR|New York|Rangers|40.751|-73.993
PHI|Philadelphia|Flyers|39.901|-75.172
PIT|Pittsburgh|Penguins|40.439|-79.989
WSH|Washington|Capitals|38.898|-77.021
#Western|Central
CHI|Chicago|Blackhawks|41.881|-87.674
COL|Colorado|Avalanche|39.749|-105.008
DAL|Dallas|Stars|32.790|-96.810
MIN|Minnesota|Wild|44.945|-93.101
NSH|Nashville|Predators|36.159|-86.778
STL|St. Louis|Blues|38.627|-90.203
UTA|Utah|Mammoth|40.768|-111.901
WPG|Winnipeg|Jets|49.893|-97.144
#Western|Pacific
ANA|Anaheim|Ducks|33.808|-117.877
CGY|Calgary|Flames|51.037|-114.052
EDM|Edmonton|Oilers|53.547|-113.498
LA|Los Angeles|Kings|34.043|-118.267
SJ|San Jose|Sharks|37.333|-121.901
SEA|Seattle|Kraken|47.622|-122.354
VAN|Vancouver|Canucks|49.278|-123.109
VGK|Vegas|Golden Knights|36.103|-115.178
""",
    "MLS": """
#Eastern|
ATL|Atlanta|Atlanta United FC|33.755|-84.401
CLT|Charlotte|Charlotte FC|35.226|-80.853
CHI|Chicago|Chicago Fire FC|41.862|-87.617
CIN|Cincinnati|FC Cincinnati|39.111|-84.522
CLB|Columbus|Columbus Crew|39.968|-83.017
DC|Washington|D.C. United|38.868|-77.013
MIA|Fort Lauderdale|Inter Miami CF|26.193|-80.161
MTL|Montréal|CF Montréal|45.563|-73.553
NE|New England|New England Revolution|42.091|-71.264
NSH|Nashville|Nashville SC|36.130|-86.766
NYC|New York|New York City FC|40.829|-73.926
RBNY|New York|New York Red Bulls|40.737|-74.150
ORL|Orlando|Orlando City SC|28.541|-81.389
PHI|Philadelphia|Philadelphia Union|39.832|-75.379
TOR|Toronto|Toronto FC|43.633|-79.419
#Western|
ATX|Austin|Austin FC|30.388|-97.719
COL|Colorado|Colorado Rapids|39.806|-104.892
DAL|Dallas|FC Dallas|33.155|-96.835
HOU|Houston|Houston Dynamo FC|29.752|-95.352
SKC|Kansas City|Sporting Kansas City|39.122|-94.823
LA|Los Angeles|LA Galaxy|33.864|-118.261
LAFC|Los Angeles|Los Angeles FC|34.013|-118.285
MIN|Minnesota|Minnesota United FC|44.953|-93.165
POR|Portland|Portland Timbers|45.521|-122.692
RSL|Salt Lake City|Real Salt Lake|40.583|-111.893
SD|San Diego|San Diego FC|32.784|-117.122
SJ|San Jose|San Jose Earthquakes|37.351|-121.925
SEA|Seattle|Seattle Sounders FC|47.595|-122.332
STL|St. Louis|St. Louis City SC|38.631|-90.211
VAN|Vancouver|Vancouver Whitecaps FC|49.277|-123.112
""",
    "EPL": """
#|
ARS|London|Arsenal|51.555|-0.108
AVL|Birmingham|Aston Villa|52.509|-1.885
BOU|Bournemouth|AFC Bournemouth|50.735|-1.838
BRE|London|Brentford|51.491|-0.289
BHA|Brighton|Brighton & Hove Albion|50.862|-0.083
BUR|Burnley|Burnley|53.789|-2.230
CHE|London|Chelsea|51.482|-0.191
CRY|London|Crystal Palace|51.398|-0.086
EVE|Liverpool|Everton|53.425|-2.999
FUL|London|Fulham|51.475|-0.222
LEE|Leeds|Leeds United|53.778|-1.572
LIV|Liverpool|Liverpool|53.431|-2.961
MCI|Manchester|Manchester City|53.483|-2.200
MUN|Manchester|Manchester United|53.463|-2.291
NEW|Newcastle upon Tyne|Newcastle United|54.976|-1.622
NFO|Nottingham|Nottingham Forest|52.940|-1.133
SUN|Sunderland|Sunderland|54.915|-1.388
TOT|London|Tottenham Hotspur|51.604|-0.066
WHU|London|West Ham United|51.539|-0.017
WOL|Wolverhampton|Wolverhampton Wanderers|52.590|-2.130
""",
    "SOCCER": """
#La Liga|
RMA|Madrid|Real Madrid|40.453|-3.688
FCB|Barcelona|FC Barcelona|41.381|2.123
ATM|Madrid|Atlético Madrid|40.436|-3.600
#Bundesliga|
BAY|Munich|Bayern Munich|48.219|11.625
BVB|Dortmund|Borussia Dortmund|51.493|7.452
#Ligue 1|
PSG|Paris|Paris Saint-Germain|48.841|2.253
#Serie A|
JUV|Turin|Juventus|45.110|7.641
INT|Milan|Inter Milan|45.478|9.124
ACM|Milan|AC Milan|45.478|9.124
NAP|Naples|Napoli|40.828|14.193
#Primeira Liga|
BEN|Lisbon|Benfica|38.753|-9.185
POR|Porto|FC Porto|41.162|-8.584
#Eredivisie|
AJA|Amsterdam|Ajax|52.314|4.942
#Scottish Premiership|
CEL|Glasgow|Celtic|55.850|-4.206
""",
    "FIFA": """
#CONMEBOL|
ARG|Argentina|Argentina|-34.603|-58.381
BRA|Brazil|Brazil|-15.794|-47.882
URU|Uruguay|Uruguay|-34.901|-56.164
COL|Colombia|Colombia|4.711|-74.072
#UEFA|
FRA|France|France|48.857|2.352
ENG|England|England|51.507|-0.128
ESP|Spain|Spain|40.417|-3.704
GER|Germany|Germany|52.520|13.405
POR|Portugal|Portugal|38.722|-9.139
NED|Netherlands|Netherlands|52.368|4.904
ITA|Italy|Italy|41.903|12.496
BEL|Belgium|Belgium|50.850|4.352
CRO|Croatia|Croatia|45.815|15.982
#CONCACAF|
USA|United States|United States|38.907|-77.037
MEX|Mexico|Mexico|19.433|-99.133
CAN|Canada|Canada|45.421|-75.697
#AFC|
JPN|Japan|Japan|35.676|139.650
KOR|South Korea|South Korea|37.567|126.978
AUS|Australia|Australia|-35.281|149.130
#CAF|
MAR|Morocco|Morocco|34.020|-6.841
SEN|Senegal|Senegal|14.716|-17.467
NGA|Nigeria|Nigeria|9.076|7.399
""",
    "CRICKET": """
#|
CSK|Chennai|Chennai Super Kings|13.063|80.279
MI|Mumbai|Mumbai Indians|18.939|72.826
RCB|Bengaluru|Royal Challengers Bengaluru|12.979|77.599
KKR|Kolkata|Kolkata Knight Riders|22.565|88.343
DC|Delhi|Delhi Capitals|28.638|77.243
PBKS|Mullanpur|Punjab Kings|30.790|76.678
RR|Jaipur|Rajasthan Royals|26.894|75.803
SRH|Hyderabad|Sunrisers Hyderabad|17.406|78.550
GT|Ahmedabad|Gujarat Titans|23.092|72.597
LSG|Lucknow|Lucknow Super Giants|26.811|80.983
""",
    "RUGBY": """
#Six Nations|
ENG|England|England|51.456|-0.342
FRA|France|France|48.924|2.360
IRL|Ireland|Ireland|53.335|-6.228
ITA|Italy|Italy|41.934|12.455
SCO|Scotland|Scotland|55.942|-3.241
WAL|Wales|Wales|51.478|-3.183
#The Rugby Championship|
NZL|New Zealand|New Zealand|-36.875|174.745
RSA|South Africa|South Africa|-26.235|27.983
AUS|Australia|Australia|-33.848|151.063
ARG|Argentina|Argentina|-34.545|-58.450
""",
    "NCAAFB": """
#SEC|
ALA|Alabama|Crimson Tide|33.208|-87.550
UGA|Georgia|Bulldogs|33.950|-83.373
LSU|LSU|Tigers|30.412|-91.184
TEX|Texas|Longhorns|30.284|-97.733
TAMU|Texas A&M|Aggies|30.610|-96.340
TENN|Tennessee|Volunteers|35.955|-83.925
FLA|Florida|Gators|29.650|-82.349
OU|Oklahoma|Sooners|35.206|-97.442
#Big Ten|
OSU|Ohio State|Buckeyes|40.002|-83.020
MICH|Michigan|Wolverines|42.266|-83.749
PSU|Penn State|Nittany Lions|40.812|-77.856
ORE|Oregon|Ducks|44.058|-123.068
USC|USC|Trojans|34.014|-118.288
#ACC|
CLEM|Clemson|Tigers|34.679|-82.843
MIA|Miami|Hurricanes|25.958|-80.239
FSU|Florida State|Seminoles|30.438|-84.304
#Big 12|
UTAH|Utah|Utes|40.760|-111.849
BYU|BYU|Cougars|40.257|-111.655
COLO|Colorado|Buffaloes|40.009|-105.267
#FBS Independents|
ND|Notre Dame|Fighting Irish|41.698|-86.234
""",
    "NCAAMB": """
#ACC|
DUKE|Duke|Blue Devils|35.997|-78.942
UNC|North Carolina|Tar Heels|35.900|-79.044
#SEC|
UK|Kentucky|Wildcats|38.050|-84.505
AUB|Auburn|Tigers|32.603|-85.488
#Big 12|
KU|Kansas|Jayhawks|38.954|-95.252
HOU|Houston|Cougars|29.722|-95.344
ARIZ|Arizona|Wildcats|32.231|-110.950
BAY|Baylor|Bears|31.549|-97.117
#Big East|
UCONN|UConn|Huskies|41.807|-72.254
NOVA|Villanova|Wildcats|40.037|-75.344
MARQ|Marquette|Golden Eagles|43.039|-87.929
#Big Ten|
MSU|Michigan State|Spartans|42.728|-84.482
PUR|Purdue|Boilermakers|40.424|-86.912
IU|Indiana|Hoosiers|39.168|-86.523
UCLA|UCLA|Bruins|34.070|-118.447
#WCC|
GONZ|Gonzaga|Bulldogs|47.667|-117.402
""",
}

# The real NBA team ids (reference column nba_id).
NBA_IDS: dict[str, str] = {
    code: str(1610612737 + i)
    for i, code in enumerate(
        ["ATL", "BOS", "CLE", "NOP", "CHI", "DAL", "DEN", "GSW", "HOU", "LAC", "LAL", "MIA", "MIL", "MIN", "BKN", "NYK", "ORL", "IND", "PHI", "PHX", "POR", "SAC", "SAS", "OKC", "TOR", "UTA", "MEM", "WAS", "DET", "CHA"]
    )
}

# ISO 3166-1 alpha-2, officially assigned codes (user_location is checked against these).
COUNTRY_CODES = frozenset(
    ["AD", "AE", "AF", "AG", "AI", "AL", "AM", "AO", "AQ", "AR", "AS", "AT", "AU", "AW", "AX", "AZ", "BA", "BB", "BD", "BE", "BF", "BG", "BH", "BI", "BJ", "BL", "BM", "BN", "BO", "BQ", "BR", "BS", "BT", "BV", "BW", "BY", "BZ", "CA", "CC", "CD", "CF", "CG", "CH", "CI", "CK", "CL", "CM", "CN", "CO", "CR", "CU", "CV", "CW", "CX", "CY", "CZ", "DE", "DJ", "DK", "DM", "DO", "DZ", "EC", "EE", "EG", "EH", "ER", "ES", "ET", "FI", "FJ", "FK", "FM", "FO", "FR", "GA", "GB", "GD", "GE", "GF", "GG", "GH", "GI", "GL", "GM", "GN", "GP", "GQ", "GR", "GS", "GT", "GU", "GW", "GY", "HK", "HM", "HN", "HR", "HT", "HU", "ID", "IE", "IL", "IM", "IN", "IO", "IQ", "IR", "IS", "IT", "JE", "JM", "JO", "JP", "KE", "KG", "KH", "KI", "KM", "KN", "KP", "KR", "KW", "KY", "KZ", "LA", "LB", "LC", "LI", "LK", "LR", "LS", "LT", "LU", "LV", "LY", "MA", "MC", "MD", "ME", "MF", "MG", "MH", "MK", "ML", "MM", "MN", "MO", "MP", "MQ", "MR", "MS", "MT", "MU", "MV", "MW", "MX", "MY", "MZ", "NA", "NC", "NE", "NF", "NG", "NI", "NL", "NO", "NP", "NR", "NU", "NZ", "OM", "PA", "PE", "PF", "PG", "PH", "PK", "PL", "PM", "PN", "PR", "PS", "PT", "PW", "PY", "QA", "RE", "RO", "RS", "RU", "RW", "SA", "SB", "SC", "SD", "SE", "SG", "SH", "SI", "SJ", "SK", "SL", "SM", "SN", "SO", "SR", "SS", "ST", "SV", "SX", "SY", "SZ", "TC", "TD", "TF", "TG", "TH", "TJ", "TK", "TL", "TM", "TN", "TO", "TR", "TT", "TV", "TW", "TZ", "UA", "UG", "UM", "US", "UY", "UZ", "VA", "VC", "VE", "VG", "VI", "VN", "VU", "WF", "WS", "YE", "YT", "ZA", "ZM", "ZW"]
)
