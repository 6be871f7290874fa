import streamlit as st

st.title("attention_order")
st.info("This page is being built.")
