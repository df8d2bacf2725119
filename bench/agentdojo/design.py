"""How a careful author would make each AgentDojo suite an llm-do project: the labels of every tool
(`CAPABILITIES`), the approval rules of the workers, and the readers that hand the assistant only
typed facts (the "dual LLM" pattern).

Everything here comes from the tools' own documentation and from what each suite's data is (whose
inbox, whose bank account, who writes a review), never from the injection tasks: see
bench/README.md ("AgentDojo: how the labels and rules were chosen").

- `labels`: tool -> the labels of its result and effect. `private`: it reads the user's own data;
  `untrusted`: what it returns can hold text a third party wrote; `egress`: it sends data, or acts,
  where others see it. `to:PARAM` names the parameter that says where an egress goes (each of them,
  if several do: a mail's recipients, cc and bcc), so that an approval rule naming known
  destinations confines it (`recipients[all] ~ ...`: every element of a list).
- `rules`: the assistant's approval rules (Python tools are asked by default).
- `readers`: workers that read for the assistant and answer with a schema that holds no free text
  (numbers, dates, e-mail addresses, identifiers): the assistant learns the facts without reading
  a third party's words. Each names its tools and its output class in `schemas.py`.
- quarantined readers (`quarantined=True`, no output class): workers that read the words for the
  assistant and answer in words, which the assistant never reads: it gets a token, and writes it
  where the words must go (a post, its answer); the call that uses it carries what the reader read
  (the dual LLM pattern's symbolic references; spec/runtime.md, "Quarantined callees").
- `quarantined_reads`: the user tasks whose answer or actions need the words of some of their
  ground-truth calls (by index) but no decision on them (a summary to post or to answer with); those
  calls go through the task's quarantined reader, and `words_into` says which tool's parameter
  gets the tokens (absent: the answer). Chosen from each task's prompt.
- `needs_text`: the user tasks whose answer or actions need the words of what some tools return
  (a summary, an address, feedback), with those tools (`*`: all): a model doing them reads that text
  itself, not through a reader. Chosen from each task's prompt.
- `inputs`: what the user's request is: `private` (the owner's own words, not to be published), so
  every frame of a run holds private data and untrusted content arms its egress.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Reader:
    name: str
    tools: tuple[str, ...]
    output: str
    """The output class in `schemas.py`."""
    description: str
    quarantined: bool = False
    """It answers in words that its caller's model never reads (`output` is then empty)."""


@dataclass(frozen=True)
class Design:
    labels: dict[str, list[str]]
    rules: list[str]
    readers: tuple[Reader, ...] = ()
    schemas: str = ""
    """The text of `schemas.py` (the readers' output classes)."""
    needs_text: dict[str, tuple[str, ...]] = field(default_factory=dict)
    inputs: str = "private"
    quarantined_reads: dict[str, tuple[int, ...]] = field(default_factory=dict)
    words_into: dict[str, tuple[str, str]] = field(default_factory=dict)

    def reads_itself(self, task: str) -> tuple[str, ...]:
        """The tools whose text the task needs read by the assistant itself (`*`: every one)."""
        return self.needs_text.get(task, ())


PRIVATE, UNTRUSTED, EGRESS = "private", "untrusted", "egress"

# --- banking ----------------------------------------------------------------------------------------

BANKING_SCHEMAS = '''
"""What the banking readers may tell the assistant: amounts, dates, account numbers."""

import datetime as dt
from typing import Annotated

from pydantic import BaseModel, Field

ACCOUNT = r"^[A-Za-z0-9]{1,34}$"
"""An IBAN, or a merchant's short name as the bank shows it (`Spotify`)."""


class Payment(BaseModel):
    id: int | None = None
    sender: str | None = Field(default=None, pattern=ACCOUNT)
    recipient: str | None = Field(default=None, pattern=ACCOUNT)
    amount: float | None = None
    date: dt.date | None = None
    recurring: bool | None = None


class Payments(BaseModel):
    """Payments without their subjects (a sender writes the subject)."""

    payments: list[Payment] = []


class BillFacts(BaseModel):
    """What a bill or a notice asks to pay: accounts and amounts, no words."""

    accounts: list[Annotated[str, Field(pattern=ACCOUNT)]] = []
    amounts: list[float] = []
    due: list[dt.date] = []
'''

BANKING = Design(
    labels={
        "get_iban": [PRIVATE],
        "get_balance": [PRIVATE],
        "get_user_info": [PRIVATE],
        "get_scheduled_transactions": [PRIVATE],  # the user's own standing orders
        "get_most_recent_transactions": [PRIVATE, UNTRUSTED],  # a sender writes an incoming payment's subject
        "read_file": [PRIVATE, UNTRUSTED],  # bills and notices others wrote
        "send_money": [EGRESS, "to:recipient"],
        "schedule_transaction": [EGRESS, "to:recipient"],
        "update_scheduled_transaction": [EGRESS, "to:recipient"],
        "update_password": [EGRESS],  # whoever knows the new password holds the account
        "update_user_info": [],  # the user's own record at the bank
    },
    rules=[
        "allow get_*",
        "allow read_file",
        "allow update_user_info",
        # money goes unasked only to the accounts the user pays already; a new payee is asked
        "allow send_money(recipient in PAYEES)",
        "allow schedule_transaction(recipient in PAYEES)",
        "allow update_scheduled_transaction(recipient == null or recipient in PAYEES)",
    ],
    readers=(
        Reader("payments_reader", ("get_most_recent_transactions",), "Payments",
               "Lists recent payments: ids, accounts, amounts, dates (no subjects)."),
        Reader("bill_reader", ("read_file",), "BillFacts",
               "Reads a bill or notice and says which accounts, amounts and due dates it names."),
    ),
    schemas=BANKING_SCHEMAS,
    needs_text={"user_task_13": ("read_file",)},  # an address to copy
)

# --- slack -----------------------------------------------------------------------------------------

SLACK_SCHEMAS = '''
"""What the Slack readers may tell the assistant: names, counts, addresses."""

from typing import Annotated

from pydantic import BaseModel, Field

NAME = r"^[A-Za-z0-9_.-]{1,40}$"
EMAIL = r"^[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,190}$"


class Channels(BaseModel):
    channels: list[Annotated[str, Field(pattern=NAME)]] = []


LINK = r"^(https?://)?[A-Za-z0-9.-]{1,100}(/[A-Za-z0-9._~%/-]{0,100})?$"


class ChannelFacts(BaseModel):
    """How many messages each user wrote, and the links they posted: no words."""

    counts: dict[Annotated[str, Field(pattern=NAME)], int] = {}
    links: list[Annotated[str, Field(pattern=LINK)]] = []


class Contacts(BaseModel):
    """Who and where a page or an inbox names: people, channels, e-mail addresses and links, no words."""

    people: list[Annotated[str, Field(pattern=NAME)]] = []
    channels: list[Annotated[str, Field(pattern=NAME)]] = []
    emails: list[Annotated[str, Field(pattern=EMAIL)]] = []
    links: list[Annotated[str, Field(pattern=LINK)]] = []
'''

SLACK = Design(
    labels={
        "get_channels": [PRIVATE, UNTRUSTED],  # anyone may name an external channel
        "get_users_in_channel": [PRIVATE],
        "read_channel_messages": [PRIVATE, UNTRUSTED],  # colleagues and guests write them
        "read_inbox": [PRIVATE, UNTRUSTED],
        "get_webpage": [UNTRUSTED, EGRESS, "to:url"],  # a request carries what its URL says
        "post_webpage": [EGRESS, "to:url"],
        "send_direct_message": [EGRESS, "to:recipient"],
        "send_channel_message": [EGRESS, "to:channel"],
        "invite_user_to_slack": [EGRESS, "to:user_email"],  # the invited reads the workspace
        "add_user_to_channel": [EGRESS, "to:channel"],
        "remove_user_from_slack": [],
    },
    rules=[
        "allow get_*",
        "allow read_*",
        "allow remove_user_from_slack",
        # the workspace's own channels are ours; an external channel is not
        "allow send_channel_message(channel in ['general', 'random', 'private'])",
        "allow add_user_to_channel(channel in ['general', 'random', 'private'])",
        "allow post_webpage(url ~ 'www.our-company.com**')",
    ],
    readers=(
        Reader("channel_lister", ("get_channels",), "Channels", "Lists the workspace's channels."),
        Reader("channel_reader", ("read_channel_messages",), "ChannelFacts",
               "Counts the messages each user wrote in a channel and lists the links posted there."),
        Reader("contact_finder", ("get_webpage", "read_inbox"), "Contacts",
               "Finds the people, channels, e-mail addresses and links a web page or an inbox names."),
        Reader("page_reader", ("get_webpage",), "", "Reads a web page and says what it says.", quarantined=True),
    ),
    schemas=SLACK_SCHEMAS,
    needs_text={  # summaries, feedback, hobbies of pages; a question asked in a channel
        **dict.fromkeys(("user_task_0", "user_task_1", "user_task_3", "user_task_6", "user_task_16",
                         "user_task_18", "user_task_20"), ("get_webpage",)),
        "user_task_4": ("read_inbox", "get_webpage"),
        "user_task_8": ("read_channel_messages",),
        "user_task_19": ("read_channel_messages",),
    },
    quarantined_reads={"user_task_15": (1, 2)},  # the pages' summary, posted to a channel of ours
    words_into={"user_task_15": ("send_channel_message", "body")},
)

# --- travel ----------------------------------------------------------------------------------------

TRAVEL_SCHEMAS = '''
"""What the review readers may tell the assistant: a rating per place, no words."""

from pydantic import BaseModel


class Ratings(BaseModel):
    """The rating of each place asked about, in the order asked."""

    ratings: list[float] = []
'''

_CATALOG = [  # the booking platform's own data: names, prices, addresses, hours
    "get_all_hotels_in_city", "get_hotels_prices", "get_hotels_address", "get_all_restaurants_in_city",
    "get_cuisine_type_for_restaurants", "get_restaurants_address", "get_dietary_restrictions_for_all_restaurants",
    "get_contact_information_for_restaurants", "get_price_for_restaurants", "check_restaurant_opening_hours",
    "get_all_car_rental_companies_in_city", "get_car_types_available", "get_car_fuel_options",
    "get_car_rental_address", "get_car_price_per_day", "get_flight_information",
]

TRAVEL = Design(
    labels={
        **{name: [] for name in _CATALOG},
        "get_user_information": [PRIVATE],
        "get_rating_reviews_for_hotels": [UNTRUSTED],  # guests write reviews
        "get_rating_reviews_for_restaurants": [UNTRUSTED],
        "get_rating_reviews_for_car_rental": [UNTRUSTED],
        "search_calendar_events": [PRIVATE, UNTRUSTED],
        "get_day_calendar_events": [PRIVATE, UNTRUSTED],
        "create_calendar_event": [EGRESS, "to:participants"],  # invitations go to the participants
        "cancel_calendar_event": [EGRESS],
        "reserve_hotel": [EGRESS],  # books, and pays, in the user's name
        "reserve_car_rental": [EGRESS],
        "reserve_restaurant": [EGRESS],
        "send_email": [EGRESS, "to:recipients"],
    },
    rules=[
        "allow get_*",
        "allow check_*",
        "allow search_*",
        "allow create_calendar_event(participants == null)",
    ],
    readers=(
        Reader("review_rater", ("get_rating_reviews_for_hotels", "get_rating_reviews_for_restaurants",
                                "get_rating_reviews_for_car_rental"), "Ratings",
               "Reads the reviews of hotels, restaurants or car rentals and gives each its rating."),
    ),
    schemas=TRAVEL_SCHEMAS,
)

# --- workspace --------------------------------------------------------------------------------------

WORKSPACE_SCHEMAS = '''
"""What the workspace readers may tell the assistant: ids, times, addresses, sizes."""

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, Field

ID = r"^[A-Za-z0-9_-]{1,40}$"
FILENAME = r"^[A-Za-z0-9_.-]{1,100}$"
EMAIL = r"^[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,190}$"


class Event(BaseModel):
    id: str | None = Field(default=None, pattern=ID)
    start: datetime | None = None
    end: datetime | None = None
    participants: list[Annotated[str, Field(pattern=EMAIL)]] = []


class Events(BaseModel):
    """Calendar events without their titles, places or descriptions (others write them)."""

    events: list[Event] = []


class File(BaseModel):
    id: str | None = Field(default=None, pattern=ID)
    filename: str | None = Field(default=None, pattern=FILENAME)
    size: int | None = None
    owner: str | None = Field(default=None, pattern=EMAIL)


class Files(BaseModel):
    """Files of the drive without their content."""

    files: list[File] = []


class Mail(BaseModel):
    id: str | None = Field(default=None, pattern=ID)
    sender: str | None = Field(default=None, pattern=EMAIL)
    sent: datetime | None = None


class Mails(BaseModel):
    """E-mails without their subjects or bodies."""

    emails: list[Mail] = []
'''

WORKSPACE = Design(
    labels={
        "get_current_day": [],
        "search_contacts_by_name": [PRIVATE],
        "search_contacts_by_email": [PRIVATE],
        **{name: [PRIVATE, UNTRUSTED] for name in (
            "get_unread_emails", "get_sent_emails", "get_received_emails", "get_draft_emails", "search_emails",
            "search_calendar_events", "get_day_calendar_events", "search_files_by_filename", "get_file_by_id",
            "list_files", "search_files")},
        # what acts answers with the record it changed: an event's or a file's text others wrote
        "send_email": [EGRESS, "to:recipients", "to:cc", "to:bcc"],
        "delete_email": [PRIVATE, UNTRUSTED],
        "create_calendar_event": [EGRESS, "to:participants"],
        "cancel_calendar_event": [EGRESS],  # the participants are told
        "reschedule_calendar_event": [PRIVATE, UNTRUSTED, EGRESS],
        "add_calendar_event_participants": [PRIVATE, UNTRUSTED, EGRESS, "to:participants"],
        "append_to_file": [PRIVATE, UNTRUSTED],
        "create_file": [],
        "delete_file": [PRIVATE, UNTRUSTED, EGRESS],  # a shared file is others' too: deleting it acts outside
        "share_file": [PRIVATE, UNTRUSTED, EGRESS, "to:email"],
    },
    rules=[
        "allow get_*",
        "allow search_*",
        "allow list_files",
        "allow create_file",
        "allow append_to_file",
        # mail and invitations to the company's own addresses stay inside it: every recipient must be
        "allow send_email(recipients[all] ~ '*@DOMAIN' and (cc == null or cc[all] ~ '*@DOMAIN')"
        " and (bcc == null or bcc[all] ~ '*@DOMAIN'))",
        "allow create_calendar_event(participants == null or participants[all] ~ '*@DOMAIN')",
        "allow add_calendar_event_participants(participants[all] ~ '*@DOMAIN')",
        "allow share_file(email ~ '*@DOMAIN')",
    ],
    readers=(
        Reader("calendar_reader", ("search_calendar_events", "get_day_calendar_events"), "Events",
               "Finds calendar events: ids, times and participants."),
        Reader("drive_reader", ("list_files", "search_files_by_filename", "search_files"), "Files",
               "Finds files of the drive: ids, names, sizes, owners."),
        Reader("mail_reader", ("search_emails", "get_unread_emails", "get_received_emails"), "Mails",
               "Finds e-mails: ids, senders, times."),
        Reader("calendar_text", ("search_calendar_events", "get_day_calendar_events"), "",
               "Reads calendar events and says what they say.", quarantined=True),
    ),
    schemas=WORKSPACE_SCHEMAS,
    needs_text=dict.fromkeys((  # summaries, codes, links, places, scores, lists, minutes, instructions
        "user_task_0", "user_task_1", "user_task_3", "user_task_14", "user_task_15", "user_task_16", "user_task_17",
        "user_task_18", "user_task_22", "user_task_23", "user_task_24", "user_task_28", "user_task_29",
        "user_task_30", "user_task_31", "user_task_32", "user_task_33", "user_task_34", "user_task_25",
        "user_task_13", "user_task_19", "user_task_36", "user_task_37", "user_task_39"), ("*",)),
    quarantined_reads={"user_task_4": (0,)},  # a summary of a day's descriptions, for the answer
)

DESIGNS = {"banking": BANKING, "slack": SLACK, "travel": TRAVEL, "workspace": WORKSPACE}
