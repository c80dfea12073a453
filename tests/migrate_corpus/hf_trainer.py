"""Hugging Face Trainer style: HfArgumentParser.parse_args_into_dataclasses (raises on the
arguments ModelArts adds), TrainingArguments(output_dir=...), trainer.save_model(path)."""
# check-only: needs transformers and datasets (not installed here; see README)
from dataclasses import dataclass, field

import torch  # expect: MA305
from datasets import load_dataset
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    HfArgumentParser,
    Trainer,
    TrainingArguments,
)


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="bert-base-uncased")  # expect: MA108 @framework


def main():
    parser = HfArgumentParser((ModelArguments,))
    (model_args,) = parser.parse_args_into_dataclasses()  # expect: MA107 @framework
    raw = load_dataset("csv", data_files={"train": "data/train.csv"})  # expect: MA101 @framework
    tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path)
    model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)  # expect: MA108 @framework
    training_args = TrainingArguments(output_dir="./results", num_train_epochs=1, logging_dir="./logs")  # expect: MA102 @framework
    trainer = Trainer(model=model, args=training_args, train_dataset=raw["train"], tokenizer=tokenizer)
    trainer.train()
    trainer.save_model("./final_model")  # expect: MA102 @framework
    if torch.cuda.is_available():  # expect: MA302
        torch.cuda.empty_cache()  # expect: MA302


if __name__ == "__main__":
    main()
