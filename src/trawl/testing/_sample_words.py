"""The vocabulary of the sample-text generator: real English words, commonest first.

Pure data, read by ``_sample_text``. Each list is ordered roughly by how common the
word is, because the generator draws from it with Zipf weights (rank r has weight
1/r): the order is what makes word frequencies look natural. Inflected forms
(plurals, verb tenses) are derived in ``_sample_text``; irregular ones are listed here.

``RARE_WORDS`` never appear in ordinary generated text: three of them in a fixed order
make a page's distinctive phrase, so a search for that phrase finds one page.
"""

from __future__ import annotations

NOUNS = """
time year way day man thing woman life child world school state family student
group country problem hand part place case week company system program question work
government number night point home water room mother area money story fact month lot
right study book eye job word business issue side kind head house service friend father
power hour game line end member law car city community name president team minute idea
kid body information back parent face level office door health person art war
history party result change morning reason research girl guy moment air teacher force
education foot boy age policy music market sense nation plan college interest death
experience effect use class control care field development role effort rate heart drug
show leader light voice wife police mind price report decision son view relationship
town road arm difference value building action model season society tax director
position player record paper space ground form event official matter center couple site
project activity star table need court oil situation cost industry figure street image
phone data picture practice piece land product doctor wall patient worker news test
movie north love support technology step baby computer type attention film tree source
organization hair window evidence population site truth energy method performance
window discussion culture page safety region garden hospital choice letter sound
theory range rule network approach trade size bank material answer list camera husband
paper deal memory detail element resource sector measure account agency design brother
chance army food species structure agreement character stock environment island factor
option scene structure shot bed amount series risk condition section property writer
solution radio color science standard strategy election magazine analysis variety
benefit response quality region weight marriage production campaign article fire
feature capital limit machine weapon season stage challenge partner meeting surface
summer lawyer audience goal nature economy future knowledge player unit window sign
ball bill collection authority river boat chair ship path hall window claim target
degree purpose skill beach coffee bridge circle medium cell engine owner debate
charge crowd cancer career dinner document finger speech instance budget border hole
hotel income item county mission guest horse neighbor sister exchange editor wind
trial package bottle vehicle plate relation league studio flight shape crisis faith
manager platform mountain sport label volume tour victory glass skin transfer clock
conference spirit visit tool desk key guide block layer highway bag category library
contract version vote sale pressure corner lesson survey argument channel contact
screen card crew finding balance height schedule lake branch bird sample forest stone
novel mirror pattern frame poem seat brain square dog cat plant apartment stream
village region mark wedding tradition portion phase request device soldier emotion
gift plane signal danger knife scale trend lunch review file festival cup rock valley
estimate fan grade notice quarter parking seed storm judge revenue garage grant tower
shirt shoe bone column route impact fee outcome row gate desert coast pool kitchen
principle battle treaty lecture pocket poll truck sky cloud clue consumer crop vendor
bench coat dream farm string teaspoon button concept dress fish foundation harbor tale
wave profile reserve snow sugar theme kingdom mood tea text chip salt steel sheet
wheel bus cash disease engineer finance hat housing jacket museum ocean prison queen
ring chest trip wine yard aisle ankle apple basket blanket breakfast candle cattle
chapter cheese chicken clinic cliff cottage cousin curtain diamond dish engine feather
fence flag flour fountain fragment fruit gallery ghost hammer helmet hill honey hook
insect jar jungle ladder lamp leaf lemon lid lion meadow metal mouse nail needle nest
orange oven painting palace pan pencil pillow pipe planet pond potato powder puzzle
rabbit rail ribbon roof rope sandwich scarf shelf shell shore silver sink soap sock
spoon stair stick sword tail tent thread thumb tiger toe tomato tongue towel toy
tunnel umbrella vase wagon wallet whale wire wolf wool worm
advantage agent aircraft alarm album algorithm ambition anchor angle anniversary
apology appeal appetite appointment architect archive arena arrival aspect asset
assignment assumption athlete atmosphere attempt attitude auction author award
background bakery ballot band banner barrel barrier baseline basin battery beam
behavior belief biography blade boundary bracket brand breath brick broadcast
bubble bucket bulletin bundle cabin cabinet calendar canal candidate canvas capacity
carbon cargo carpet carriage cartoon castle catalog cathedral ceiling ceremony
champion chart chemical circuit citizen civilian classroom climate coalition code
colleague colony column comment commission committee companion compound concert
conflict congress connection consensus constitution consultant container context
contest contribution convention conversation copper council counter courage
courtesy craft credit criminal criticism curriculum customer cycle dancer deadline
decade defendant deficit delegate delivery demand democracy density departure
deposit depth deputy descent desire destination diagram dialogue diet dimension
diploma disaster discipline discount display distance district doctrine domain
donor draft drawing driver duty dynasty earthquake edition editorial elbow
election electricity elevator embassy emergency empire employee employer encounter
enterprise entrance episode equation equipment era error essay estate ethics
exhibit expansion expedition expense experiment expert explosion export exposure
extension fabric facility faculty failure fantasy fashion fault fiction filter
fleet folder formula fortune forum fraction franchise frequency frontier fuel
funding furniture galaxy gap generation genre gesture glacier globe government
graduate grain graph gravity grocery guardian guitar habit handle harvest headline
heritage hero hierarchy highlight holiday horizon household hunger hypothesis
identity illness illustration immigrant incident index infant inflation ingredient
inhabitant initiative injury inquiry insight inspector institution instructor
instrument insurance intention interior interval interview invasion inventory
investment investor invitation journal journey junction jury justice keyboard
laboratory landscape laptop lawn layout legend legislation leisure liability
license lifestyle literature loan lobby location logic luggage lyric magnet
majority mammal manual manuscript margin marine mayor meal mechanism medal
medicine membership merchant merger metaphor migration milestone mineral minister
minority miracle mixture molecule momentum monitor monument mortgage motion motor
muscle mystery narrative navy negotiation niece node nominee notebook notion
nutrient objective obligation observer obstacle occasion occupation offense
offering operation operator opponent orbit orchestra outlet output oxygen painter
pamphlet panel parade paragraph parliament passage passenger passion password
patent pathway pavement payment peak pension pepper percentage perception
permission personality perspective petition philosophy photograph physician pilot
pioneer pitch planner plastic plot poet portrait possession poverty precedent
preference premium presence preview priest priority procedure processor producer
profession professor profit prosecutor protein protest province publication
publisher pulse pump purchase pyramid quantity quote railway rainbow ratio reader
reality receipt recipe recovery referee reform refugee regime register regulation
rehearsal reign reporter republic reputation reservoir resident resistance
resolution restaurant retailer retirement revolution reward rhythm rival ritual
rival robot romance rumor runway sailor salary satellite scandal scenario scholar
scholarship scientist script sculpture secretary segment seminar senator sensor
sequence servant session settlement shadow shareholder shelter shift shortage
shoulder sibling silence simulation slogan soil solar solo span speaker specimen
spectrum sphere sponsor stadium statement statistic statue status stereotype
stimulus stomach strain stranger strength stroke submarine subscription suburb
succession suitcase summit supplier surgeon surgery surplus suspect symbol
symptom syndrome tactic talent tank teenager telescope temple tenant tendency
tension terminal territory testimony textbook theater therapy thesis threshold
ticket timber tobacco tournament tract trader traffic trail trainer transaction
transition translation transport tribe tribute trophy tuition tutor twin
uniform universe utility vaccine vacuum venture verdict veteran victim viewer
violin virus vision vitamin volunteer voter voyage warehouse warrior wealth
website welfare widow wilderness winner witness workshop wrist youth zone
"""

# Nouns that take no plural in ordinary use; drawn only where a singular fits.
MASS_NOUNS = """
information advice evidence research knowledge software traffic weather music water
money furniture equipment progress feedback luggage homework pollution electricity
wildlife transport literature heritage wealth poverty justice courage leisure oxygen
"""

IRREGULAR_PLURALS = {
    "man": "men",
    "woman": "women",
    "child": "children",
    "person": "people",
    "foot": "feet",
    "tooth": "teeth",
    "mouse": "mice",
    "analysis": "analyses",
    "crisis": "crises",
    "thesis": "theses",
    "hypothesis": "hypotheses",
    "phenomenon": "phenomena",
    "criterion": "criteria",
    "leaf": "leaves",
    "knife": "knives",
    "life": "lives",
    "wife": "wives",
    "shelf": "shelves",
    "wolf": "wolves",
    "half": "halves",
    "potato": "potatoes",
    "tomato": "tomatoes",
    "hero": "heroes",
    "echo": "echoes",
    "species": "species",
    "series": "series",
    "news": "news",
    "data": "data",
    "people": "people",
    "others": "others",
    "cattle": "cattle",
    "kid": "kids",
    "stimulus": "stimuli",
    "medium": "media",
}

VERBS = """
say make go take see come know get give find think tell become show leave feel put
bring begin keep hold write stand hear let mean set meet run pay sit speak lie lead
read grow lose fall send build understand draw break spend cut rise drive buy wear
choose seek throw catch deal win forget teach sell fight hide shake ring steal
use work call try ask need seem help turn start move like live believe happen
provide include continue change play follow create open walk offer remember consider
appear serve expect suggest raise pass report decide pull return explain hope develop
carry allow add reach kill remain receive describe agree support produce end identify
accept protect contain improve apply increase avoid imagine prepare finish determine
discover compare announce encourage reduce replace establish prove achieve attend
examine depend enter share require discuss maintain reveal argue represent collect
design observe celebrate represent visit arrive publish review measure release
invite record present prefer mention restore transform explore define recommend
assess approve attract capture combine complain confirm connect construct convince
cover damage declare deliver deny destroy display earn engage estimate expand
express extend fill focus gather handle ignore indicate inform install intend
introduce investigate join judge justify launch limit manage mark obtain occur
operate organize perform permit place plan predict preserve prevent promise
promote propose pursue question realize recognize recover refer reflect refuse
reject relate rely remove repair repeat request resist resolve respond retain
retire save secure select separate settle solve specify stop store stress
struggle submit succeed suffer supply survive suspect sustain test thank threaten
trace train travel treat trust update urge value vary wait warn wash watch wonder
worry adapt adjust admire admit advise afford analyze anticipate appreciate
approach arrange assign assist assume attach attempt authorize balance bind blame
borrow bounce breathe calculate cancel characterize cite clarify classify climb
commit communicate compete compile complete compose conclude conduct consult
contribute control convert cooperate coordinate correct count craft dance debate
decline dedicate defeat defend delay demonstrate derive deserve detect devote
differ dig direct disappear distinguish distribute divide document dominate
double doubt drop educate eliminate embrace emerge emphasize employ enable enforce
enhance ensure entertain evaluate evolve exceed exchange exercise exhibit exist
export expose facilitate fail favor feature finance fix float fold forecast
format found frame fund generate govern grab graduate greet guarantee guide hang
harvest highlight hire host hunt illustrate implement imply import impose inherit
initiate inspect inspire integrate interpret interrupt invent invest isolate
label lack lift link list locate map merge migrate minimize modify monitor
motivate negotiate nominate note notice obey object oppose outline overcome owe
paint participate persuade pick pioneer plant point polish pose pour practice
praise pray preach print proceed process profit program prohibit protest provoke
publish punish purchase qualify quote rank rate react recall recruit regulate
reinforce relax rescue research reserve reside restrict reward rotate rush
satisfy scan schedule score screen seize shape shift ship shop sign sketch skip
slip smile sort spark specialize spin split sponsor spot spread stabilize stage
stimulate stir strengthen stretch strike study substitute summarize supervise
surround swim switch tackle target tend thrive tolerate trade transfer translate
transmit trap undergo unite upgrade verify violate vote wander weigh welcome wrap
"""

IRREGULAR_VERBS = {
    "say": ("said", "said"),
    "make": ("made", "made"),
    "go": ("went", "gone"),
    "take": ("took", "taken"),
    "see": ("saw", "seen"),
    "come": ("came", "come"),
    "know": ("knew", "known"),
    "get": ("got", "gotten"),
    "give": ("gave", "given"),
    "find": ("found", "found"),
    "think": ("thought", "thought"),
    "tell": ("told", "told"),
    "become": ("became", "become"),
    "leave": ("left", "left"),
    "feel": ("felt", "felt"),
    "put": ("put", "put"),
    "bring": ("brought", "brought"),
    "begin": ("began", "begun"),
    "keep": ("kept", "kept"),
    "hold": ("held", "held"),
    "write": ("wrote", "written"),
    "stand": ("stood", "stood"),
    "hear": ("heard", "heard"),
    "let": ("let", "let"),
    "mean": ("meant", "meant"),
    "set": ("set", "set"),
    "meet": ("met", "met"),
    "run": ("ran", "run"),
    "pay": ("paid", "paid"),
    "sit": ("sat", "sat"),
    "speak": ("spoke", "spoken"),
    "lie": ("lay", "lain"),
    "lead": ("led", "led"),
    "read": ("read", "read"),
    "grow": ("grew", "grown"),
    "lose": ("lost", "lost"),
    "fall": ("fell", "fallen"),
    "send": ("sent", "sent"),
    "build": ("built", "built"),
    "understand": ("understood", "understood"),
    "draw": ("drew", "drawn"),
    "break": ("broke", "broken"),
    "spend": ("spent", "spent"),
    "cut": ("cut", "cut"),
    "rise": ("rose", "risen"),
    "drive": ("drove", "driven"),
    "buy": ("bought", "bought"),
    "wear": ("wore", "worn"),
    "choose": ("chose", "chosen"),
    "seek": ("sought", "sought"),
    "throw": ("threw", "thrown"),
    "catch": ("caught", "caught"),
    "deal": ("dealt", "dealt"),
    "win": ("won", "won"),
    "forget": ("forgot", "forgotten"),
    "teach": ("taught", "taught"),
    "sell": ("sold", "sold"),
    "fight": ("fought", "fought"),
    "hide": ("hid", "hidden"),
    "shake": ("shook", "shaken"),
    "ring": ("rang", "rung"),
    "steal": ("stole", "stolen"),
    "bind": ("bound", "bound"),
    "dig": ("dug", "dug"),
    "hang": ("hung", "hung"),
    "spin": ("spun", "spun"),
    "split": ("split", "split"),
    "spread": ("spread", "spread"),
    "strike": ("struck", "struck"),
    "swim": ("swam", "swum"),
    "undergo": ("underwent", "undergone"),
    "overcome": ("overcame", "overcome"),
    "weigh": ("weighed", "weighed"),
    "found": ("founded", "founded"),
}

# Verbs whose final consonant doubles before -ed and -ing.
DOUBLING_VERBS = frozenset(
    [
        "stop",
        "plan",
        "drop",
        "ship",
        "shop",
        "grab",
        "admit",
        "commit",
        "control",
        "refer",
        "occur",
        "permit",
        "prefer",
        "regret",
        "submit",
        "skip",
        "slip",
        "spot",
        "trap",
        "scan",
        "chat",
        "nod",
        "rub",
        "step",
        "tap",
        "trim",
        "wrap",
        "ban",
        "beg",
        "hug",
        "map",
        "pin",
        "rob",
        "chop",
        "clap",
        "drag",
        "grin",
        "hop",
        "plug",
        "strip",
        "tip",
        "zip",
    ]
)

ADJECTIVES = """
new good high old great big small large national young different long little
important political bad white real best right social only public sure low early
able human local late hard major better economic strong possible whole free
military true federal international full special easy clear recent certain
personal open red difficult available likely short single medical current wrong
private past foreign fine common poor natural significant similar hot dead
central happy serious ready simple left physical general environmental financial
blue democratic dark various entire close legal religious cold final main green
nice huge popular traditional cultural wide particular top far deep individual
specific necessary middle beautiful heavy sexual tough commercial quick
scientific interesting successful professional careful quiet modern bright
familiar ancient rural urban northern southern eastern western coastal wooden
golden silent patient gentle brave honest humble loyal proud rare rapid steady
subtle vivid warm wild wise calm busy cheap clean dry empty fresh glad grand
lively loud narrow neat odd plain rich rough sharp smooth soft solid strange
sweet thick thin tiny vast weak wet annual apparent brief broad chief civil
complex constant correct crucial daily decent direct distinct double eager
efficient elderly equal essential exact extra extreme fair famous fellow fierce
formal frequent friendly generous genuine global gradual grateful guilty healthy
helpful historic honorable ideal immediate independent industrial informal
initial inner innocent intense joint junior keen legitimate literary logical
loose lucky mental mild minor mobile moral multiple mutual native negative
neutral noble normal notable obvious official operational ordinary organic
original outer overall parallel partial peaceful permanent pleasant positive
potential powerful practical precious precise premium previous primary prime
principal prior productive profound prominent proper prospective proud pure
radical rational regional regular relative relevant reliable remote residential
responsible rigid royal sacred safe secondary secure senior sensitive separate
severe silly sincere slight slow sophisticated spare spiritual stable standard
strict structural stupid substantial sudden sufficient suitable superb superior
supreme surprising suspicious sustainable symbolic technical temporary tender
terrible thorough tight total tropical typical ultimate unable unique universal
unknown unusual upper useful usual valuable variable verbal vertical visible
visual vital voluntary vulnerable weekly welcome wonderful worthy young
abstract academic accurate active adequate advanced aggressive alternative
ambitious amazing anxious artificial automatic average aware basic bitter bold
brilliant careless casual cautious cheerful classic clever colorful comfortable
compact competitive complete comprehensive confident conscious conservative
considerable consistent contemporary convenient creative critical curious
dangerous decisive defensive deliberate delicate dense dependent desperate
detailed digital diplomatic dramatic dynamic educational elegant electric
electronic emotional empirical endless enormous enthusiastic evident excellent
exceptional excessive exclusive exotic experimental explicit extensive faithful
fantastic fascinating favorable flexible fragile frank functional fundamental
furious generic gifted graceful hostile identical illegal imaginary immense
impressive incredible inevitable influential innovative intelligent intimate
invisible isolated lasting liberal logical magnificent marginal massive mature
memorable minimal modest monthly mysterious nervous nuclear numerous objective
occasional optimistic orderly outstanding painful passionate persistent
pleasant polite portable precise predictable pregnant promising protective
rational realistic reasonable rebellious remarkable respectful restless
ridiculous romantic rustic scarce selective sensible sentimental shallow
skilled sleepy solitary spacious spectacular splendid spontaneous stubborn
stylish subsequent subtle superficial tremendous uncertain unfair
unprecedented urgent utmost vacant versatile vibrant vigorous vintage virtual
"""

ADVERBS = """
also very often too usually really early never always sometimes
likely simply generally actually rather almost especially
quickly probably already directly easily eventually
exactly certainly normally currently extremely finally constantly properly soon
specifically daily highly immediately relatively slowly fairly primarily
completely ultimately widely recently seriously frequently fully mostly naturally
nearly occasionally carefully clearly essentially possibly slightly somewhat
equally greatly necessarily personally rarely regularly similarly basically
closely effectively initially literally mainly merely gently obviously quietly
entirely truly increasingly roughly strongly briefly openly firmly deeply
heavily largely steadily sharply broadly formally jointly loosely neatly
partly readily smoothly solely strictly swiftly warmly wisely
"""

PREPOSITIONS = """
of in to for with on at from by about as into like through after over between out
against during without before under around among across behind beyond near
toward within along despite throughout beneath
"""

FIRST_NAMES = """
James Mary John Patricia Robert Jennifer Michael Linda William Elizabeth David
Barbara Richard Susan Joseph Jessica Thomas Sarah Charles Karen Daniel Nancy
Matthew Lisa Anthony Betty Mark Margaret Donald Sandra Steven Ashley Paul
Kimberly Andrew Emily Joshua Donna Kenneth Michelle Kevin Dorothy Brian Carol
George Amanda Edward Melissa Ronald Deborah Timothy Stephanie Jason Rebecca
Jeffrey Sharon Ryan Laura Jacob Cynthia Gary Kathleen Nicholas Amy Eric Angela
Jonathan Shirley Stephen Anna Larry Brenda Justin Pamela Scott Emma Brandon
Nicole Benjamin Helen Samuel Samantha Gregory Katherine Frank Christine
Alexander Debra Raymond Rachel Patrick Carolyn Jack Janet Dennis Catherine
Jerry Maria Tyler Heather Aaron Diane Henry Ruth Adam Julie Peter Olivia
Nathan Joyce Zachary Virginia Walter Victoria Kyle Kelly Harold Lauren Carl
Christina Arthur Joan Gerald Evelyn Roger Judith Keith Megan Jeremy Andrea
"""

SURNAMES = """
Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez
Hernandez Lopez Gonzalez Wilson Anderson Thomas Taylor Moore Jackson Martin Lee
Perez Thompson White Harris Sanchez Clark Ramirez Lewis Robinson Walker Young
Allen King Wright Scott Torres Nguyen Hill Flores Green Adams Nelson Baker Hall
Rivera Campbell Mitchell Carter Roberts Gomez Phillips Evans Turner Diaz Parker
Cruz Edwards Collins Reyes Stewart Morris Morales Murphy Cook Rogers Gutierrez
Ortiz Morgan Cooper Peterson Bailey Reed Kelly Howard Ramos Kim Cox Ward
Richardson Watson Brooks Chavez Wood James Bennett Gray Mendoza Ruiz Hughes
Price Alvarez Castillo Sanders Patel Myers Long Ross Foster Jimenez Powell
Jenkins Perry Russell Sullivan Bell Coleman Butler Henderson Barnes Fisher
Vasquez Simmons Romero Jordan Patterson Alexander Hamilton Graham Reynolds
Griffin Wallace Moreno West Cole Hayes Bryant Herrera Gibson Ellis Tran Medina
"""

PLACES = """
London Paris Berlin Madrid Rome Vienna Prague Dublin Lisbon Athens Oslo Stockholm
Helsinki Copenhagen Amsterdam Brussels Warsaw Budapest Zurich Geneva Munich
Hamburg Milan Naples Barcelona Seville Porto Edinburgh Glasgow Manchester
Liverpool Bristol Leeds Boston Chicago Denver Seattle Portland Austin Dallas
Houston Atlanta Miami Phoenix Detroit Toronto Montreal Vancouver Ottawa Calgary
Sydney Melbourne Brisbane Perth Auckland Wellington Tokyo Osaka Kyoto Seoul
Beijing Shanghai Singapore Bangkok Jakarta Manila Delhi Mumbai Chennai Nairobi
Lagos Cairo Casablanca Johannesburg Lima Bogota Santiago Quito Havana Mexico
Oregon Texas Ohio Florida Kentucky Vermont Montana Nevada Arizona Virginia
Scotland Wales Ireland Norway Sweden Finland Denmark Poland Austria Portugal
Greece Canada Brazil Argentina Chile Peru Kenya Egypt Morocco Japan Korea India
"""

MONTHS = """
January February March April May June July August September October November December
"""

# Uncommon but real words kept out of ordinary text; distinctive phrases use them.
RARE_WORDS = """
abacus abalone acanthus accordion acrobat adage adobe aerie agate albatross alchemy
alcove allspice almanac alpaca amaranth amethyst ammonite anemone anise antler
apricot aqueduct arbor archipelago armadillo artichoke astrolabe aurora avalanche
azalea badger bagpipe balsam bamboo banjo baobab barnacle basalt bassoon bayou
beacon begonia bellows bergamot beryl bison bobcat bonsai boomerang bramble
brigantine brocade buckwheat bugle bullfinch buttercup cactus caldera calliope
camellia camphor canary candelabra canoe capybara caramel caravan cardamom
caribou carnation carousel cashew cassowary catamaran cauldron cedar celery
chameleon chamomile chandelier chestnut chickadee chinchilla chrysalis cicada
cinnamon citadel clarinet clementine clover cobalt cockatoo coconut comet conch
condor coral cormorant cornet cowbell coyote cranberry crescent cricket crocus
croissant cumin cypress daffodil dahlia damask dandelion dewdrop dingo dirigible
dolphin dormouse dragonfly dulcimer dune eggplant egret elderberry emerald emu
ermine eucalyptus falcon fennel ferret fiddle fig firefly flamingo flannel
flute foxglove gadfly galleon gardenia garnet gazebo gazelle gecko geranium
geyser ginger giraffe glockenspiel gondola gooseberry gorilla granite grasshopper
grotto guava gull hamster harmonica harp hawthorn hazelnut hedgehog heron
hibiscus hickory hippo honeysuckle hummingbird hyacinth ibis iguana indigo iris
ivory jackal jade jaguar jasmine jellyfish juniper kangaroo kayak kelp kestrel
kettle kiwi koala kumquat labyrinth lagoon lantern larch lark lavender lemur
lichen lilac limestone llama lobster locust loom lotus lute lynx macaw magnolia
mahogany mandolin mango mangrove maple marigold marimba marmot marten marzipan
meerkat melon meringue mimosa mink mistletoe molasses mongoose monsoon moose
mosaic moth mulberry muskrat mussel myrtle narwhal nasturtium nectarine nightingale
nutmeg oak oboe obsidian ocelot octopus okapi oleander olive opal orchid oriole
osprey ostrich otter owl oyster paddock pagoda palomino pangolin panther papaya
paprika parakeet parsley parsnip partridge peacock pebble pelican penguin peony
peppermint periwinkle persimmon petunia pheasant piccolo pinecone pistachio
platypus plum poppy porcupine porpoise primrose pudding puffin pumpkin quail
quartz quince quokka raccoon radish raven redwood reindeer rhubarb robin rosemary
saffron sage salamander sandalwood sapphire sardine sassafras saxophone scallop
sequoia sextant shamrock sitar skylark sloth snapdragon sorrel sparrow spinach
squirrel starfish stingray sturgeon sunflower swallow sycamore tamarind tangerine
tapir tarragon teak thistle thrush thyme toucan tortoise trombone trumpet tulip
turmeric turquoise tuba ukulele vanilla velvet verbena vicuna violet vulture
walnut walrus wasabi weasel willow wisteria wombat woodpecker xylophone yak yarrow
zebra zeppelin zinnia zither
"""
